package throughput;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the Java readers of the reader comparison share (this module, common, a
 * dependency of its siblings laurelin (LaurelinReader) and root4j (Root4jReader)):
 * the options, the JSON lines, the clocks, the page_cache preparation, one pass with
 * its checksum, the compression named from the file header, and the repetitions with
 * their check that passes agree. A reader gives only how to read one
 * numeric branch of one file (FileReader) and its names.
 *
 * Exit codes: 0 fine; 2 a missing or damaged file, a missing branch, or any read error
 * (message naming file, its compression and branch, then the library's own exception);
 * 3 passes disagree.
 */
final class ReaderCommon {
    static final long GOLDEN = 0x9E3779B97F4A7C15L;

    /** One value's share of the checksum: its bit pattern, zero-extended to 64 bits (pass.hpp). */
    static long mix(long bits) {
        long h = (bits + 1) * GOLDEN;  // arithmetic modulo 2^64, as pass.hpp's uint64_t
        return h ^ (h >>> 32);
    }

    /** A failure naming the file and branch; exit code 2. */
    static final class ReaderError extends RuntimeException {
        final int exitCode;

        ReaderError(String message, int exitCode) {
            super(message);
            this.exitCode = exitCode;
        }
    }

    /** Adds every value of `branch` in `path` to `pass`, basket by basket. */
    interface BranchRead {
        void read(String path, String tree, String branch, Pass pass) throws Exception;
    }

    /** Entries of `tree` in `path`; -1 when it cannot tell. */
    interface EntryCount {
        long entries(String path, String tree);
    }

    /**
     * One reader: its method ("laurelin": the method of the records and the library
     * named in error messages; its kernel, the records' kernel and the prefix of
     * stderr, is "laurelin_reader"), how it reads a numeric branch of a file into a
     * pass, and how it counts a tree's entries.
     */
    record FileReader(String method, BranchRead reader, EntryCount counter) {
        String kernel() {
            return method + "_reader";
        }

        void read(String path, String tree, String branch, Pass pass) throws Exception {
            reader.read(path, tree, branch, pass);
        }

        long entries(String path, String tree) {
            return counter.entries(path, tree);
        }
    }

    // --- options ---------------------------------------------------------------------------------
    static Map<String, String> parse(String[] args) {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("files", "");
        o.put("tree", "Events");
        o.put("branches", "");
        o.put("reps", "5");
        o.put("warmup", "1");
        o.put("min-sample-s", "0");
        o.put("max-sample-s", "0");
        o.put("cache", "warm");
        o.put("sample-every", "100000");
        o.put("page-cache-tool", "");
        o.put("corrupt-for-test", "0");
        for (int i = 0; i < args.length; i++) {
            String key = args[i];
            if (!key.startsWith("--") || i + 1 >= args.length) {
                throw new ReaderError("expected '--option value', got '" + key + "'", 2);
            }
            key = key.substring(2);
            if (!o.containsKey(key)) {
                throw new ReaderError("unknown option --" + key, 2);
            }
            o.put(key, args[++i]);
        }
        return o;
    }

    static long integer(Map<String, String> o, String key, long min) {
        try {
            long v = Long.parseLong(o.get(key));
            if (v >= min) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new ReaderError("--" + key + " must be an integer >= " + min + ", got '" + o.get(key) + "'", 2);
    }

    static double seconds(Map<String, String> o, String key) {
        try {
            double v = Double.parseDouble(o.get(key));
            if (v >= 0 && v <= 600) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new ReaderError("--" + key + " must be a number of seconds in [0, 600], got '" + o.get(key) + "'", 2);
    }

    static List<String> list(Map<String, String> o, String key) {
        String text = o.get(key);
        if (text.isEmpty()) {
            throw new ReaderError("--" + key + " is required (comma-separated)", 2);
        }
        List<String> items = Arrays.asList(text.split(",", -1));
        if (items.contains("")) {
            throw new ReaderError("--" + key + " has an empty element: '" + text + "'", 2);
        }
        return items;
    }

    // --- JSON lines ------------------------------------------------------------------------------
    static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    // The JSON lines' stream: main sends System.out to stderr, so what a reader library
    // prints (root4j: "Could not find ROOT clas: ...") cannot be taken for a record.
    static final java.io.PrintStream RECORDS = System.out;

    static void json(Object... keysAndValues) {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < keysAndValues.length; i += 2) {
            if (i > 0) {
                b.append(", ");
            }
            Object v = keysAndValues[i + 1];
            b.append(quote((String) keysAndValues[i])).append(": ");
            b.append(v instanceof String ? quote((String) v) : String.valueOf(v));
        }
        RECORDS.println(b.append("}"));
    }

    // --- clocks ----------------------------------------------------------------------------------
    static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    /** CPU time of the whole process (JIT and GC threads included), as CLOCK_PROCESS_CPUTIME_ID. */
    static double cpuSeconds() {
        return OS.getProcessCpuTime() * 1e-9;
    }

    static double wallSeconds() {
        return System.nanoTime() * 1e-9;
    }

    /**
     * Seconds the calling thread has waited on a run queue for a CPU since it started (the second
     * field of /proc/thread-self/schedstat, in ns), -1 where the kernel does not say: as
     * bench::run_delay_seconds, what delayed a sample by its cause.
     */
    static double runDelaySeconds() {
        try {
            String[] fields = new String(java.nio.file.Files.readAllBytes(
                    java.nio.file.Paths.get("/proc/thread-self/schedstat"))).trim().split("\\s+");
            return Long.parseLong(fields[1]) * 1e-9;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * How many passes one sample repeats: bench::Calibration's rule (kernels/common/bench.hpp),
     * the same for every reader of the comparison.
     */
    static final class Calibration {
        final long warmup;
        final double minSample;
        final double maxSample;
        long loops = 1;

        Calibration(long warmup, double minSample, double maxSample) {
            this.warmup = warmup;
            this.minSample = minSample;
            this.maxSample = maxSample;
        }

        long loops(long rep) {
            return rep < warmup ? 1 : loops;
        }

        void update(long rep, long these, double sampleSeconds, double wallSeconds) {
            double call = sampleSeconds / these;
            long wanted = !(minSample > 0) || call >= minSample ? 1
                    : (long) Math.ceil(1.1 * minSample / Math.max(call, 1e-9));
            if (maxSample > 0 && wallSeconds > 0) {
                wanted = Math.min(wanted, Math.max(1L, (long) (maxSample / (wallSeconds / these))));
            }
            loops = rep < warmup ? wanted : (sampleSeconds < minSample ? Math.max(loops, wanted) : loops);
        }
    }

    // --- cache state (the C++ page_cache tool, so every reader uses the same code) ---------------
    static final class CachePrep {
        final String mode;
        final String tool;
        double wall;
        double cpu;
        double residency;  // warm: the smallest resident fraction seen; cold: the largest

        CachePrep(String mode, String tool) {
            if (!mode.equals("warm") && !mode.equals("cold")) {
                throw new ReaderError("--cache must be 'warm' or 'cold', got '" + mode + "'", 2);
            }
            if (tool.isEmpty()) {
                throw new ReaderError("--page-cache-tool is required (the page_cache kernel)", 2);
            }
            this.mode = mode;
            this.tool = tool;
        }

        void run(String mode, List<String> files) {
            try {
                Process p = new ProcessBuilder(tool, "--mode", mode, "--files", String.join(",", files))
                        .redirectError(ProcessBuilder.Redirect.INHERIT)
                        .start();
                String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                int status = p.waitFor();
                if (status != 0) {
                    throw new ReaderError("page_cache --mode " + mode + " failed (exit " + status + ") on "
                            + String.join(",", files), 2);
                }
                // The tool's validation record says how resident the files ended up.
                String key = mode.equals("warm") ? "lowest_fraction" : "highest_fraction";
                java.util.regex.Matcher m = java.util.regex.Pattern
                        .compile("\"" + key + "\":\\s*([0-9.eE+-]+)").matcher(out);
                if (!m.find()) {
                    throw new ReaderError("page_cache --mode " + mode + " printed no " + key + ": " + out, 2);
                }
                double fraction = Double.parseDouble(m.group(1));
                residency = mode.equals("warm") ? Math.min(residency, fraction) : Math.max(residency, fraction);
            } catch (IOException | InterruptedException e) {
                throw new ReaderError("cannot run " + tool + ": " + e, 2);
            }
        }

        void startPass(List<String> files) {
            wall = 0;
            cpu = 0;
            residency = mode.equals("warm") ? 1.0 : 0.0;
            if (mode.equals("cold")) {
                run("cold", files);  // before the pass's clock starts
            }
        }

        void beforeFile(String file) {
            if (mode.equals("warm")) {
                double w0 = wallSeconds();
                double c0 = cpuSeconds();
                run("warm", List.of(file));
                cpu += cpuSeconds() - c0;
                wall += wallSeconds() - w0;
            }
        }
    }

    // --- one pass --------------------------------------------------------------------------------
    static final class Pass {
        final long every;
        final CachePrep prep;
        long next;
        long checksum;
        long items;
        long events;
        double wall0;
        double cpu0;
        double wall;
        double cpu;
        double openSeconds;
        final List<double[]> samples = new ArrayList<>();

        Pass(long every, CachePrep prep) {
            this.every = every;
            this.next = every;
            this.prep = prep;
        }

        void start() {
            wall0 = wallSeconds();
            cpu0 = cpuSeconds();
        }

        void stop() {
            wall = wallSeconds() - wall0 - prep.wall;
            cpu = cpuSeconds() - cpu0 - prep.cpu;
        }

        /**
         * The values of `entries` entries, a Java array of any numeric leaf type (what the
         * reader library made of Float_t ... ULong64_t and Bool_t): each value's bit pattern
         * in its own type, so float and double of the same number differ, and an unsigned
         * type's bits are those of the signed Java type it arrives in.
         */
        void values(Object array, long entries) {
            // One loop per primitive array type: Java has no generics over primitives, and
            // boxing every value would put an allocation in the timed pass.
            long sum = 0;
            int n;
            if (array instanceof float[]) {
                float[] v = (float[]) array;
                n = v.length;
                for (float x : v) {
                    sum += mix(Float.floatToRawIntBits(x) & 0xFFFFFFFFL);
                }
            } else if (array instanceof double[]) {
                double[] v = (double[]) array;
                n = v.length;
                for (double x : v) {
                    sum += mix(Double.doubleToRawLongBits(x));
                }
            } else if (array instanceof long[]) {
                long[] v = (long[]) array;
                n = v.length;
                for (long x : v) {
                    sum += mix(x);
                }
            } else if (array instanceof int[]) {
                int[] v = (int[]) array;
                n = v.length;
                for (int x : v) {
                    sum += mix(x & 0xFFFFFFFFL);
                }
            } else if (array instanceof short[]) {
                short[] v = (short[]) array;
                n = v.length;
                for (short x : v) {
                    sum += mix(x & 0xFFFFL);
                }
            } else if (array instanceof byte[]) {
                byte[] v = (byte[]) array;
                n = v.length;
                for (byte x : v) {
                    sum += mix(x & 0xFFL);
                }
            } else if (array instanceof boolean[]) {
                boolean[] v = (boolean[]) array;
                n = v.length;
                for (boolean x : v) {
                    sum += mix(x ? 1 : 0);
                }
            } else {
                throw new ReaderError("the reader gave values of type " + array.getClass().getSimpleName()
                        + ", not a numeric array", 2);
            }
            checksum += sum;
            items += n;
            events += entries;
            if (items >= next) {
                samples.add(new double[] {items, events, wallSeconds() - wall0 - prep.wall});
                while (next <= items) {
                    next += every;
                }
            }
        }
    }

    // --- the file header -------------------------------------------------------------------------
    /** ROOT's file-level compression setting, from the file header (ROOT's documented layout). */
    static int compressionSetting(String path) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(path, "r")) {
            byte[] magic = new byte[4];
            f.readFully(magic);
            if (!new String(magic, "US-ASCII").equals("root")) {
                throw new IOException("not a ROOT file (no 'root' magic)");
            }
            int version = f.readInt();
            boolean big = version > 1000000;
            f.seek(big ? 41 : 33);
            return f.readInt();
        }
    }

    static String compressionName(int setting) {
        if (setting % 100 == 0) {
            return "none";  // level 0: stored uncompressed, whatever the algorithm
        }
        switch (setting / 100) {
            case 0: case 1: return "ZLIB";
            case 2: return "LZMA";
            case 4: return "LZ4";
            case 5: return "ZSTD";
            default: return "algorithm " + setting / 100;
        }
    }

    static void readPass(FileReader reader, List<String> files, String tree, String branch, Pass pass,
                         CachePrep prep) {
        for (String path : files) {
            String where = "file " + path + ", branch " + branch;
            if (!new File(path).isFile()) {
                throw new ReaderError("cannot open " + where + ": no such file", 2);
            }
            prep.beforeFile(path);
            int setting;
            try {
                setting = compressionSetting(path);
            } catch (IOException e) {
                throw new ReaderError("cannot open " + where + ": " + e.getMessage(), 2);
            }
            long eventsBefore = pass.events;
            try {
                reader.read(path, tree, branch, pass);
            } catch (ReaderError e) {
                throw e;
            } catch (Throwable e) {
                throw new ReaderError("file " + path + " (" + compressionName(setting) + " compression), branch "
                        + branch + ": " + reader.method() + " failed: " + e, 2);
            }
            if (pass.events == eventsBefore && reader.entries(path, tree) > 0) {
                throw new ReaderError(where + ": " + reader.method() + " read no entries", 2);
            }
        }
    }

    // --- main ------------------------------------------------------------------------------------
    static void main(FileReader reader, String[] args) {
        System.setOut(System.err);
        try {
            System.exit(run(reader, args));
        } catch (ReaderError e) {
            System.err.println(reader.kernel() + ": error: " + e.getMessage());
            System.exit(e.exitCode);
        }
    }

    static int run(FileReader reader, String[] args) {
        String kernel = reader.kernel();
        String method = reader.method();
        Map<String, String> o = parse(args);
        List<String> files = list(o, "files");
        List<String> branches = list(o, "branches");
        String tree = o.get("tree");
        long reps = integer(o, "reps", 1);
        long warmup = integer(o, "warmup", 0);
        long every = integer(o, "sample-every", 1);
        double minSample = seconds(o, "min-sample-s");
        double maxSample = seconds(o, "max-sample-s");
        boolean corrupt = integer(o, "corrupt-for-test", 0) != 0;
        CachePrep prep = new CachePrep(o.get("cache"), o.get("page-cache-tool"));

        Map<String, long[]> reference = new HashMap<>();  // branch -> items, events, checksum
        long disagreements = 0;
        // each sample repeats its pass until its reading time reaches --min-sample-s, as read_branch's
        Map<String, Calibration> calibrations = new HashMap<>();
        for (String branch : branches) {
            calibrations.put(branch, new Calibration(warmup, minSample, maxSample));
        }
        for (long rep = 0; rep < warmup + reps; rep++) {
            for (String branch : branches) {
                Calibration calibration = calibrations.get(branch);
                long loops = calibration.loops(rep);
                double wall = 0, cpu = 0, open = 0, prepSeconds = 0;
                boolean warm = prep.mode.equals("warm");
                double residency = warm ? 1.0 : 0.0;  // the furthest any pass started from its state
                double delay0 = runDelaySeconds(), started = wallSeconds();
                Pass first = null;  // its rate samples, items and checksum stand for the sample's
                for (long loop = 0; loop < loops; loop++) {
                    prep.startPass(files);
                    Pass pass = new Pass(every, prep);
                    pass.start();
                    readPass(reader, files, tree, branch, pass, prep);
                    pass.stop();
                    if (corrupt) {
                        pass.checksum ^= 1;  // a deliberately wrong reader, for the tests
                    }
                    long[] now = {pass.items, pass.events, pass.checksum};
                    long[] ref = reference.computeIfAbsent(branch, b -> now);
                    if (!Arrays.equals(ref, now)) {
                        disagreements++;
                        System.err.printf("%s: pass %d disagrees on branch %s%n", kernel, rep, branch);
                    }
                    wall += pass.wall;
                    cpu += pass.cpu;
                    open += pass.openSeconds;
                    prepSeconds += prep.wall;
                    residency = warm ? Math.min(residency, prep.residency) : Math.max(residency, prep.residency);
                    if (first == null) {
                        first = pass;
                    }
                }
                double delay1 = runDelaySeconds();
                calibration.update(rep, loops, wall - open, wallSeconds() - started);
                json("record", "timing", "kernel", kernel, "method", method, "branch", branch,
                        "rep", rep - warmup, "warmup", rep < warmup, "order", 0, "wall_s", wall / loops,
                        "cpu_s", cpu / loops, "open_s", open / loops, "loops", loops, "sample_s", wall - open,
                        "run_delay_s", delay0 < 0 || delay1 < 0 ? -1.0 : delay1 - delay0,
                        "events", first.events, "items", first.items,
                        "checksum", String.format("%016x", first.checksum), "files", files.size(),
                        "cache", prep.mode, "prep_s", prepSeconds / loops, "residency", residency);
                for (double[] s : first.samples) {
                    json("record", "sample", "method", method, "branch", branch, "rep", rep - warmup,
                            "items", (long) s[0], "events", (long) s[1], "wall_s", s[2]);
                }
            }
        }
        for (Map.Entry<String, long[]> e : reference.entrySet()) {
            json("record", "result", "branch", e.getKey(), "items", e.getValue()[0], "events", e.getValue()[1],
                    "checksum", String.format("%016x", e.getValue()[2]));
        }
        json("record", "validation", "kernel", kernel, "ok", disagreements == 0,
                "disagreements", disagreements, "java", System.getProperty("java.version"),
                "checksum", reference.isEmpty() ? "" : String.format("%016x", reference.values().iterator().next()[2]));
        return disagreements == 0 ? 0 : 3;
    }

    private ReaderCommon() {
    }
}

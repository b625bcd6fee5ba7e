package throughput;

import org.dianahep.root4j.RootFileReader;
import org.dianahep.root4j.core.RootInput;
import org.dianahep.root4j.interfaces.TBranch;
import org.dianahep.root4j.interfaces.TLeaf;
import org.dianahep.root4j.interfaces.TLeafB;
import org.dianahep.root4j.interfaces.TLeafD;
import org.dianahep.root4j.interfaces.TLeafElement;
import org.dianahep.root4j.interfaces.TLeafF;
import org.dianahep.root4j.interfaces.TLeafI;
import org.dianahep.root4j.interfaces.TLeafL;
import org.dianahep.root4j.interfaces.TLeafO;
import org.dianahep.root4j.interfaces.TLeafS;
import org.dianahep.root4j.interfaces.TTree;

import throughput.ReaderCommon.Pass;
import throughput.ReaderCommon.ReaderError;

import java.io.File;
import java.io.IOException;
import java.util.List;

import static throughput.ReaderCommon.wallSeconds;

/**
 * The second Java reader of the reader comparison: root4j, the pure-Java ROOT
 * reader seed 000 measured (github.com/diana-hep/root4j at 624b697, built from
 * source with root4j.patch (this module's), which makes it read ROOT 6 files, LZ4 and ZSTD).
 * It reads one numeric branch (flat, jagged as a leaf list X_pt[nX]/F, or a member
 * of a split object collection, X.p4.pt; floats, integers and bools) basket by basket
 * with root4j's own file parsing, decompression and entry offsets, and prints the
 * same JSON lines as LaurelinReader and the C++ kernel read_branch (options,
 * records, passes and exit codes: ReaderCommon, of the module ../common). Exit code 2 carries root4j's own exception.
 */
public final class Root4jReader {
    static final ReaderCommon.FileReader READER =
            new ReaderCommon.FileReader("root4j", Root4jReader::readFile, Root4jReader::fileEntries);

    static TTree openTree(RootFileReader file, String path, String treeName) throws Exception {
        Object tree = file.hasKey(treeName) ? file.get(treeName) : null;
        if (!(tree instanceof TTree)) {
            throw new ReaderError("file " + path + ": no tree '" + treeName + "'", 2);
        }
        return (TTree) tree;
    }

    static void readFile(String path, String treeName, String branchName, Pass pass) throws Exception {
        double t0 = wallSeconds();
        RootFileReader file = new RootFileReader(new File(path));
        try {
            TTree tree = openTree(file, path, treeName);
            TBranch branch = findBranch(tree.getBranches(), branchName);
            if (branch == null) {
                throw new ReaderError("file " + path + ", branch " + branchName + ": no such branch in tree '"
                        + treeName + "'", 2);
            }
            List<?> leaves = branch.getLeaves();
            ValueType type = leaves != null && leaves.size() == 1 ? ValueType.of(leaves.get(0)) : null;
            if (type == null) {
                throw new ReaderError("file " + path + ", branch " + branchName + ": not a single numeric leaf ("
                        + (leaves == null || leaves.isEmpty() ? "no leaves" : leaves.size() + " leaves, the first "
                        + describe(leaves.get(0))) + ")", 2);
            }
            TLeaf leaf = (TLeaf) leaves.get(0);
            long entries = Math.min(tree.getEntries(), branch.getEntries());
            // Basket k holds entries [starts[k], starts[k + 1]); the last one, the basket
            // being written (fWriteBasket), is often kept inside the TTree itself when a
            // file was not closed cleanly (the CMS NanoAOD file): it ends at the last entry.
            long[] starts = branch.getBasketEntry();
            int baskets = branch.getWriteBasket() + 1;
            pass.openSeconds += wallSeconds() - t0;
            for (int k = 0; k < baskets; k++) {
                long start = starts == null ? 0 : starts[k];
                long stop = Math.min(k + 1 < baskets ? starts[k + 1] : entries, entries);
                if (stop <= start) {
                    continue;
                }
                pass.values(basket(branch, leaf, type, start, stop), stop - start);
            }
        } finally {
            file.close();
        }
    }

    /** A leaf's kind for an error: its class, and for a split member's leaf ROOT's type code. */
    static String describe(Object leaf) {
        String kind = leaf.getClass().getSimpleName();
        return leaf instanceof TLeafElement ? kind + " of ROOT type " + ((TLeafElement) leaf).getType() : kind;
    }

    /**
     * The branch named `name` among `branches` and, depth first, their sub-branches: a
     * member of a split object collection ("Jet.p4.pt" of std::vector<aod::Jet>) is a
     * sub-branch of the collection's branch.
     */
    static TBranch findBranch(List<?> branches, String name) {
        for (Object o : branches) {
            TBranch b = (TBranch) o;
            if (b.getName().equals(name)) {
                return b;
            }
            List<?> sub = b.getBranches();
            TBranch found = sub == null ? null : findBranch(sub, name);
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    /** The numeric leaf types: root4j's leaf interface, the value's size on file, its Java array. */
    enum ValueType {
        FLOAT(TLeafF.class, 4), DOUBLE(TLeafD.class, 8), INT(TLeafI.class, 4), LONG(TLeafL.class, 8),
        SHORT(TLeafS.class, 2), BYTE(TLeafB.class, 1), BOOL(TLeafO.class, 1);

        final Class<?> leaf;
        final int size;

        ValueType(Class<?> leaf, int size) {
            this.leaf = leaf;
            this.size = size;
        }

        /** The type of a leaf (unsigned ones arrive as the signed type of their size); null: not numeric. */
        static ValueType of(Object leaf) {
            if (leaf instanceof TLeafElement) {
                return ofDataType(((TLeafElement) leaf).getType());
            }
            for (ValueType type : values()) {
                if (type.leaf.isInstance(leaf)) {
                    return type;
                }
            }
            return null;
        }

        /**
         * A split member's leaf (TLeafElement) carries ROOT's EDataType code instead of a
         * leaf class; a code beyond these (an array or a pointer member, an object) is not
         * a single number per element: null.
         */
        static ValueType ofDataType(int code) {
            switch (code) {
                case 5: return FLOAT;                      // kFloat_t
                case 8: return DOUBLE;                     // kDouble_t
                case 3: case 13: return INT;               // kInt_t, kUInt_t
                case 4: case 14: case 16: case 17: return LONG;  // kLong_t, kULong_t, kLong64_t, kULong64_t
                case 2: case 12: return SHORT;             // kShort_t, kUShort_t
                case 1: case 11: return BYTE;              // kChar_t, kUChar_t
                case 18: return BOOL;                      // kBool_t
                default: return null;
            }
        }

        /** `count` values read from `in` into a Java array of this type (root4j's readFixedArray). */
        Object read(RootInput in, int count) throws IOException {
            switch (this) {
                case FLOAT: { float[] v = new float[count]; in.readFixedArray(v); return v; }
                case DOUBLE: { double[] v = new double[count]; in.readFixedArray(v); return v; }
                case INT: { int[] v = new int[count]; in.readFixedArray(v); return v; }
                case LONG: { long[] v = new long[count]; in.readFixedArray(v); return v; }
                case SHORT: { short[] v = new short[count]; in.readFixedArray(v); return v; }
                case BYTE: { byte[] v = new byte[count]; in.readFixedArray(v); return v; }
                default: { boolean[] v = new boolean[count]; in.readFixedArray(v); return v; }
            }
        }
    }

    /**
     * The values of entries [start, stop) of one basket: root4j positions its
     * decompressed buffer at each entry (its entry offsets, or the fixed entry size
     * of a flat branch); the values of entry e lie between its position and the next
     * entry's, the last entry's up to the end of the basket's data (fLast).
     */
    static Object basket(TBranch branch, TLeaf leaf, ValueType type, long start, long stop) throws Exception {
        long[] position = new long[(int) (stop - start) + 1];
        RootInput in = null;
        for (long e = start; e < stop; e++) {
            in = branch.setPosition(leaf, e);  // the same basket, decompressed once
            position[(int) (e - start)] = in.getPosition();
        }
        position[position.length - 1] = in.getLast();
        long bytes = position[position.length - 1] - position[0];
        for (int i = 0; i + 1 < position.length; i++) {
            long size = position[i + 1] - position[i];
            if (size < 0 || size % type.size != 0) {
                throw new ReaderError("entry " + (start + i) + " has " + size + " bytes, not an array of "
                        + type.size + "-byte values (" + type + ")", 2);
            }
        }
        // The entries of a leaf-list branch lie back to back: read them in one go.
        in.setPosition(position[0]);
        return type.read(in, (int) (bytes / type.size));
    }

    static long fileEntries(String path, String tree) {
        try {
            RootFileReader file = new RootFileReader(new File(path));
            try {
                return openTree(file, path, tree).getEntries();
            } finally {
                file.close();
            }
        } catch (Exception e) {
            return -1;
        }
    }

    public static void main(String[] args) {
        ReaderCommon.main(READER, args);
    }

    private Root4jReader() {
    }
}

package throughput;

import edu.vanderbilt.accre.laurelin.array.Array;
import edu.vanderbilt.accre.laurelin.array.ArrayBuilder;
import edu.vanderbilt.accre.laurelin.array.JaggedArray;
import edu.vanderbilt.accre.laurelin.array.RawArray;
import edu.vanderbilt.accre.laurelin.interpretation.AsDtype;
import edu.vanderbilt.accre.laurelin.interpretation.AsJagged;
import edu.vanderbilt.accre.laurelin.interpretation.Interpretation;
import edu.vanderbilt.accre.laurelin.root_proxy.ROOTFile;
import edu.vanderbilt.accre.laurelin.root_proxy.SimpleType;
import edu.vanderbilt.accre.laurelin.root_proxy.TBranch;
import edu.vanderbilt.accre.laurelin.root_proxy.TFile;
import edu.vanderbilt.accre.laurelin.root_proxy.TLeaf;
import edu.vanderbilt.accre.laurelin.root_proxy.TTree;
import edu.vanderbilt.accre.laurelin.spark_ttree.SlimTBranch;

import throughput.ReaderCommon.Pass;
import throughput.ReaderCommon.ReaderError;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import static throughput.ReaderCommon.wallSeconds;

/**
 * The Java reader of the reader comparison: seed 000 compared root4j with C++
 * ROOT; root4j is not on Maven Central and cannot parse ROOT 6 files unpatched
 * (its patched build is the second Java reader, ../root4j), so this
 * uses laurelin (edu.vanderbilt.accre:laurelin), the pure-Java reader that
 * succeeded it. It reads one numeric branch (jagged or flat; floats, integers,
 * bools) basket by basket
 * with laurelin's own file parsing, decompression and ArrayBuilder, and
 * prints the same JSON lines as the C++ kernel read_branch: "timing" per
 * pass, "sample" every --sample-every items, "result" per branch and one
 * "validation". The checksum is the one of kernels/reader_comparison/pass.hpp.
 * Options, records, passes and exit codes are ReaderCommon's (module ../common),
 * shared with the root4j reader; this class is how laurelin reads a file.
 *
 * Exit codes: 0 fine; 2 a missing or damaged file, a missing branch, or any
 * read error (message naming file, its compression and branch, then laurelin's
 * own exception); 3 passes disagree. Whether an error means "laurelin cannot
 * read this compression" is decided from that exception by the Python side
 * (reader_comparison.classify_failure), never from an exit code.
 */
public final class LaurelinReader {
    static final ReaderCommon.FileReader READER =
            new ReaderCommon.FileReader("laurelin", LaurelinReader::readFile, LaurelinReader::fileEntries);

    // --- reading with laurelin -------------------------------------------------------------------
    /** Baskets straight from the file through laurelin's decompression, with no basket cache. */
    static final class Baskets implements ArrayBuilder.GetBasket {
        final SlimTBranch branch;
        final ROOTFile file;

        Baskets(SlimTBranch branch, ROOTFile file) {
            this.branch = branch;
            this.file = file;
        }

        @Override
        public ArrayBuilder.BasketKey basketkey(int id) {
            SlimTBranch.SlimTBasket basket = branch.getBasket(id);
            basket.initializeMetadata(file);
            return new ArrayBuilder.BasketKey(basket.getKeyLen(), basket.getLast(), basket.getObjLen());
        }

        @Override
        public RawArray dataWithoutKey(int id) {
            try {
                return new RawArray(branch.getBasket(id).getPayload(file));
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }
    }

    static void readFile(String path, String treeName, String branchName, Pass pass) throws Exception {
        double t0 = wallSeconds();
        try (TFile file = TFile.getFromFile(path); ROOTFile raw = ROOTFile.getInputFile(path)) {
            TTree tree = new TTree(file.getProxy(treeName), file);
            List<TBranch> found;
            try {
                found = tree.getBranches(branchName);
            } catch (RuntimeException e) {
                found = List.of();  // laurelin: "Could not find all requested branches"
            }
            if (found.isEmpty()) {
                throw new ReaderError("file " + path + ", branch " + branchName + ": no such branch in tree '"
                        + treeName + "'", 2);
            }
            TBranch branch = found.get(0);
            List<TLeaf> leaves = branch.getLeaves();
            AsDtype.Dtype type = leaves.size() == 1 ? dtypeOf(leaves.get(0).getLeafType()) : null;
            if (type == null) {
                throw new ReaderError("file " + path + ", branch " + branchName + ": not a single numeric leaf ("
                        + (leaves.isEmpty() ? "no leaves" : leaves.size() + " leaves, the first "
                        + leaves.get(0).getClassName() + " of type " + leaves.get(0).getLeafType()) + ")", 2);
            }
            TBranch.ArrayDescriptor desc = branch.getArrayDescriptor();
            AsDtype dtype = new AsDtype(type);
            Interpretation interpretation = desc == null ? dtype
                    : desc.isFixed() ? new AsDtype(type, List.of(desc.getFixedLength()))
                    : new AsJagged(dtype, desc.getSkipBytes());
            long[] offsets = branch.getBasketEntryOffsets();
            Baskets baskets = new Baskets(SlimTBranch.getFromTBranch(branch), raw);
            long entries = tree.getEntries();
            pass.openSeconds += wallSeconds() - t0;
            for (int k = 0; k + 1 < offsets.length && offsets[k] < entries; k++) {
                long start = offsets[k];
                long stop = Math.min(offsets[k + 1], entries);
                if (stop <= start) {
                    continue;
                }
                Array array = new ArrayBuilder(baskets, interpretation, offsets, null, start, stop)
                        .getArray(0, (int) (stop - start));
                Array content = array instanceof JaggedArray ? ((JaggedArray) array).content() : array;
                pass.values(content.toArray(), stop - start);
            }
        }
    }

    /** laurelin's array type of each numeric leaf value type. */
    static final Map<SimpleType, AsDtype.Dtype> DTYPES = Map.ofEntries(
            Map.entry(SimpleType.Bool, AsDtype.Dtype.BOOL), Map.entry(SimpleType.Int8, AsDtype.Dtype.INT1),
            Map.entry(SimpleType.Int16, AsDtype.Dtype.INT2), Map.entry(SimpleType.Int32, AsDtype.Dtype.INT4),
            Map.entry(SimpleType.Int64, AsDtype.Dtype.INT8), Map.entry(SimpleType.UInt8, AsDtype.Dtype.UINT1),
            Map.entry(SimpleType.UInt16, AsDtype.Dtype.UINT2), Map.entry(SimpleType.UInt32, AsDtype.Dtype.UINT4),
            Map.entry(SimpleType.UInt64, AsDtype.Dtype.UINT8), Map.entry(SimpleType.Float32, AsDtype.Dtype.FLOAT4),
            Map.entry(SimpleType.Float64, AsDtype.Dtype.FLOAT8));

    /** The array type of a leaf's values (of its items, for an array leaf); null: not numeric. */
    static AsDtype.Dtype dtypeOf(SimpleType type) {
        SimpleType base = type instanceof SimpleType.ArrayType ? type.getBaseType() : type;
        return base == null ? null : DTYPES.get(base);
    }

    static long fileEntries(String path, String tree) {
        try (TFile file = TFile.getFromFile(path)) {
            return new TTree(file.getProxy(tree), file).getEntries();
        } catch (Exception e) {
            return -1;
        }
    }

    // --- main ------------------------------------------------------------------------------------
    public static void main(String[] args) {
        ReaderCommon.main(READER, args);
    }

    private LaurelinReader() {
    }
}

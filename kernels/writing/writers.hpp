// The writers of the writing experiment, each writing entries [0, n) of
// a source to an Output, and the matching read-backs. Every writer takes its
// entries from the same EntrySource and writes the same columns. What each
// writer is and what it can write: the table of methods at the end (methods(),
// writers.cpp; write_bench --list-methods prints it).
//
// With data products (the objects workload, WriteSettings::products),
// root_imt writes one branch per product, split one sub-branch per member.
//
// `flush_bytes` is the compressed bytes after which a TTree flushes its
// baskets (TTree::SetAutoFlush(-flush_bytes); TBufferMerger workers also hand
// their file over then) and RNTuple closes a cluster
// (RNTupleWriteOptions::SetApproxZippedClusterSize): one knob for both; 0
// keeps each format's default (TTree: 30 MB, RNTuple: 128 MiB).
#pragma once

#include <string>
#include <vector>

#include "media.hpp"
#include "schema.hpp"
#include "simple_format.hpp"

namespace writing {

struct WriteSettings {
  std::string tree_name;  // TTree or RNTuple name
  int threads = 1;
  std::string compression;  // none, ZLIB, LZ4, ZSTD, LZMA
  int level = 0;
  int root_settings = 0;  // ROOT's algorithm*100 + level
  long long flush_bytes = 32000000;
  std::size_t simple_batch_bytes = 1 << 20;
  bool products = false;  // the source is a ProductStore, the trees hold its products
};

void write_tbuffermerger(Output &out, const EntrySource &source, std::uint64_t n, const WriteSettings &s);
void write_rntuple(Output &out, const EntrySource &source, std::uint64_t n, const WriteSettings &s);
void write_root_imt(Output &out, const EntrySource &source, std::uint64_t n, const WriteSettings &s);
simple::WriteStats write_simple(Output &out, const EntrySource &source, std::uint64_t n, const WriteSettings &s,
                                simple::Serialization serialization);

// Read with `threads` threads, each over its own range of entries.
Checksums read_tree(Output &out, const Schema &schema, const WriteSettings &s, int threads);
Checksums read_rntuple(Output &out, const Schema &schema, const WriteSettings &s, int threads);
// The compressed bytes of the output tree's baskets, every branch and sub-branch
// (TTree::GetZipBytes), read from the finished file.
long long tree_basket_bytes(Output &out, const WriteSettings &s);
// Checks every event against `source` too (simple_format.hpp).
Checksums read_simple(Output &out, const EntrySource &source);

// ---- the methods: one table ------------------------------------------------------------------
// Every writer write_bench's --method names, with what write_bench needs to know of it: its
// error texts and --list-methods come from this table (writers.cpp, methods()),
// and the Python side's lists are checked against --list-methods (tests/experiments/test_writing.py).
// A new writer: its function above, and one row of the table.
enum class Format { Tree, RNTuple, Simple };  // what it writes: how it is read back and named
struct Method {
  const char *name;
  // Writes entries [0, n) of `source` to `out`; returns simple_root's events_split
  // (events whose products more than one thread serialized), -1 for the others.
  long long (*write)(Output &out, const EntrySource &source, std::uint64_t n, const WriteSettings &s);
  Format format;
  bool flat;      // writes flat columns: the random and events workloads
  bool products;  // writes data products: the objects workload
  bool imt;       // --threads > 1 run on ROOT's implicit multi-threading pool
  const char *help;
};
const std::vector<Method> &methods();
// The names of the methods for which `which` holds, as "a, b, c".
std::string method_names(bool (*which)(const Method &) = nullptr);
// The method named `name`; an unknown name is an error listing the table's names.
const Method &method_named(const std::string &name);
const char *format_name(Format format);
// The output's file name ending: ".tpsimple" for the simple format, else ".root".
const char *file_suffix(const Method &method);
// Reads `out` back as `method` wrote it, with `threads` threads (the simple format: one).
Checksums read_back(const Method &method, Output &out, const EntrySource &source, const WriteSettings &s, int threads);

}  // namespace writing

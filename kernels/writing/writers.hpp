// The four writers of the writing experiment, each writing entries [0, n) of
// a source to an Output, and the matching read-backs. Every writer takes its
// entries from the same EntrySource and writes the same columns.
//
//   tbuffermerger  N threads, each filling its own TTree in a TBufferMergerFile
//                  and handing it to ROOT::TBufferMerger every flush (seed 003)
//   rntuple        ROOT::RNTupleParallelWriter, one fill context per thread
//   root_imt       one TTree filled by one thread, ROOT's implicit
//                  multi-threading compressing baskets (seed 001's "ROOT")
//   simple         the per-event format of simple_format.hpp (seed 001), its
//                  columns' values copied as they are
//   simple_root    the same format, each data product ROOT-serialized (seed
//                  001's; needs the objects workload's ProductStore)
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

}  // namespace writing

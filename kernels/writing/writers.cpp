#include "writers.hpp"

#include <ROOT/RNTuple.hxx>
#include <ROOT/RNTupleParallelWriter.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/TBufferMerger.hxx>
#include <TDirectory.h>
#include <TTree.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "aod_products.hpp"
#include "root_formats.hpp"

namespace writing {

namespace {

// Runs work(w) on `threads` threads; the first exception is rethrown after all joined.
// `failed` turns true as soon as one thread fails, so the others can stop early.
template <class F>
void run_threads(int threads, std::atomic<bool> &failed, F &&work) {
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> workers;
  for (int w = 0; w < threads; ++w)
    workers.emplace_back([&, w] {
      try {
        work(w);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    });
  for (auto &t : workers) t.join();
  if (error) std::rethrow_exception(error);
}

std::uint64_t range_begin(std::uint64_t n, int threads, int w) {
  return n * static_cast<std::uint64_t>(w) / static_cast<std::uint64_t>(threads);
}

}  // namespace

Expected expected_checksums(const EntrySource &source, std::uint64_t n, int threads) {
  std::vector<Expected> parts(static_cast<std::size_t>(threads));
  std::atomic<bool> failed{false};
  run_threads(threads, failed, [&](int w) {
    Expected &part = parts[static_cast<std::size_t>(w)];
    part.checksums = Checksums(source.schema());
    EntryView view;
    std::vector<unsigned char> scratch;
    for (std::uint64_t i = range_begin(n, threads, w); i < range_begin(n, threads, w + 1); ++i) {
      source.get(i, view, scratch);
      part.checksums.add(view);
      part.bytes += view.total_bytes();
    }
  });
  Expected all;
  for (const auto &part : parts) {
    all.checksums.merge(part.checksums);
    all.bytes += part.bytes;
  }
  return all;
}

void write_tbuffermerger(Output &out, const EntrySource &source, std::uint64_t n, const WriteSettings &s) {
  ROOT::TBufferMerger merger(open_root_output(out, s.root_settings));
  std::atomic<bool> failed{false};
  run_threads(s.threads, failed, [&](int w) {
    std::unique_ptr<TreeFiller> filler;  // its buffers must outlive the file that owns the tree
    auto file = merger.GetFile();
    TTree *tree = nullptr;
    {
      TDirectory::TContext here(file.get());
      tree = new TTree(s.tree_name.c_str(), s.tree_name.c_str());  // owned by `file`
    }
    tree->ResetBit(kMustCleanup);
    if (s.flush_bytes > 0) tree->SetAutoFlush(-s.flush_bytes);
    filler = std::make_unique<TreeFiller>(*tree, source.schema());
    EntryView view;
    std::vector<unsigned char> scratch;
    Long64_t since_write = 0;
    // As in ROOT's own TBufferMerger benchmark: hand the file over at every
    // auto-flush (once the tree knows how many entries one flush holds).
    for (std::uint64_t i = range_begin(n, s.threads, w); i < range_begin(n, s.threads, w + 1) && !failed; ++i) {
      source.get(i, view, scratch);
      if (filler->fill(view) < 0) throw std::runtime_error("TTree::Fill failed for entry " + std::to_string(i));
      if (++since_write == tree->GetAutoFlush()) {
        since_write = 0;
        file->Write();
      }
    }
    file->Write();
  });
}  // ~TBufferMerger writes the rest and closes the output

void write_rntuple(Output &out, const EntrySource &source, std::uint64_t n, const WriteSettings &s) {
  ROOT::RNTupleWriteOptions options;
  options.SetCompression(static_cast<std::uint32_t>(s.root_settings));
  if (s.flush_bytes > 0) {
    const auto cluster = static_cast<std::size_t>(s.flush_bytes);
    options.SetMaxUnzippedClusterSize(std::max(options.GetMaxUnzippedClusterSize(), 10 * cluster));
    options.SetApproxZippedClusterSize(cluster);
  }
  // Disk and tmpfs: RNTuple's own file writer. Memory and the throttled
  // medium: into a TFile (TMemFile, throttled TFile), as RNTuple appends to
  // an existing ROOT file.
  std::unique_ptr<TFile> file;
  std::unique_ptr<ROOT::RNTupleParallelWriter> writer;
  if (out.medium().in_memory() || out.medium().throttled()) {
    file = open_root_output(out, s.root_settings);
    writer = ROOT::RNTupleParallelWriter::Append(make_model(source.schema()), s.tree_name, *file, options);
  } else {
    writer = ROOT::RNTupleParallelWriter::Recreate(make_model(source.schema()), s.tree_name, out.write_path(), options);
  }
  std::atomic<bool> failed{false};
  run_threads(s.threads, failed, [&](int w) {
    auto context = writer->CreateFillContext();
    NTupleFiller filler(*context, source.schema());
    EntryView view;
    std::vector<unsigned char> scratch;
    for (std::uint64_t i = range_begin(n, s.threads, w); i < range_begin(n, s.threads, w + 1) && !failed; ++i) {
      source.get(i, view, scratch);
      filler.fill(view);
    }
    context->FlushCluster();
  });
  writer->CommitDataset();
  writer.reset();
  if (file) {
    file->Close();
    file.reset();
  }
}

void write_root_imt(Output &out, const EntrySource &source, std::uint64_t n, const WriteSettings &s) {
  // The fillers' buffers and objects must outlive the file that owns the tree.
  std::unique_ptr<TreeFiller> filler;
  std::unique_ptr<ProductTreeFiller> products;
  auto file = open_root_output(out, s.root_settings);
  TTree *tree = nullptr;
  {
    TDirectory::TContext here(file.get());
    tree = new TTree(s.tree_name.c_str(), s.tree_name.c_str());  // owned by `file`
  }
  if (s.flush_bytes > 0) tree->SetAutoFlush(-s.flush_bytes);
  if (s.products) products = std::make_unique<ProductTreeFiller>(*tree, dynamic_cast<const ProductStore &>(source));
  else filler = std::make_unique<TreeFiller>(*tree, source.schema());
  EntryView view;
  std::vector<unsigned char> scratch;
  for (std::uint64_t i = 0; i < n; ++i) {
    Int_t filled;
    if (products) {
      filled = products->fill(i);
    } else {
      source.get(i, view, scratch);
      filled = filler->fill(view);
    }
    if (filled < 0) throw std::runtime_error("TTree::Fill failed for entry " + std::to_string(i));
  }
  tree->Write();
  file->Close();
}

simple::WriteStats write_simple(Output &out, const EntrySource &source, std::uint64_t n, const WriteSettings &s,
                                simple::Serialization serialization) {
  auto sink = out.medium().in_memory() ? simple::memory_sink(out.memory())
                                       : simple::file_sink(out.write_path(), false, out.throttle());
  return simple::write(*sink, source, n, s.threads, simple::codec_from_name(s.compression), s.level,
                       s.simple_batch_bytes, serialization);
}

namespace {

// Sums of per-thread checksums over [0, n), each thread with its own reader.
template <class F>
Checksums read_in_parallel(std::uint64_t n, int threads, const Schema &schema, F &&read_range) {
  threads = static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, n)));
  std::vector<Checksums> parts(static_cast<std::size_t>(threads));
  std::atomic<bool> failed{false};
  run_threads(threads, failed, [&](int w) {
    parts[static_cast<std::size_t>(w)] = read_range(range_begin(n, threads, w), range_begin(n, threads, w + 1));
  });
  Checksums all(schema);
  for (const auto &part : parts) all.merge(part);
  return all;
}

TTree *get_tree(TFile &file, Output &out, const WriteSettings &s) {
  auto *tree = file.Get<TTree>(s.tree_name.c_str());
  if (!tree) throw std::runtime_error(out.where() + " has no tree '" + s.tree_name + "'");
  return tree;
}

std::unique_ptr<ROOT::RNTupleReader> get_ntuple(TFile &file, Output &out, const WriteSettings &s) {
  auto *anchor = file.Get<ROOT::RNTuple>(s.tree_name.c_str());
  if (!anchor) throw std::runtime_error(out.where() + " has no RNTuple '" + s.tree_name + "'");
  return ROOT::RNTupleReader::Open(*anchor);
}

}  // namespace

Checksums read_tree(Output &out, const Schema &schema, const WriteSettings &s, int threads) {
  const auto n = static_cast<std::uint64_t>(get_tree(*open_root_input(out), out, s)->GetEntries());
  return read_in_parallel(n, threads, schema, [&](std::uint64_t begin, std::uint64_t end) {
    auto file = open_root_input(out);
    TTree &tree = *get_tree(*file, out, s);
    if (s.products)
      return product_tree_checksums(tree, schema, out.where(), static_cast<Long64_t>(begin), static_cast<Long64_t>(end));
    return tree_checksums(tree, schema, out.where(), static_cast<Long64_t>(begin), static_cast<Long64_t>(end));
  });
}

long long tree_basket_bytes(Output &out, const WriteSettings &s) {
  auto file = open_root_input(out);
  return static_cast<long long>(get_tree(*file, out, s)->GetZipBytes());
}

Checksums read_rntuple(Output &out, const Schema &schema, const WriteSettings &s, int threads) {
  const std::uint64_t n = get_ntuple(*open_root_input(out), out, s)->GetNEntries();
  return read_in_parallel(n, threads, schema, [&](std::uint64_t begin, std::uint64_t end) {
    auto file = open_root_input(out);
    return ntuple_checksums(*get_ntuple(*file, out, s), schema, out.where(), begin, end);
  });
}

Checksums read_simple(Output &out, const EntrySource &source) {
  const auto result = out.medium().in_memory() ? simple::read_memory(out.memory(), out.where(), &source)
                                               : simple::read_file(out.path(), &source);
  return result.checksums;
}

// ---- the methods ------------------------------------------------------------------------------

namespace {

template <void (*Writer)(Output &, const EntrySource &, std::uint64_t, const WriteSettings &)>
long long unsplit(Output &out, const EntrySource &source, std::uint64_t n, const WriteSettings &s) {
  Writer(out, source, n, s);
  return -1;
}

template <simple::Serialization Serialization>
long long simple_writer(Output &out, const EntrySource &source, std::uint64_t n, const WriteSettings &s) {
  const simple::WriteStats stats = write_simple(out, source, n, s, Serialization);
  return Serialization == simple::Serialization::Root ? static_cast<long long>(stats.events_split) : -1;
}

}  // namespace

const std::vector<Method> &methods() {
  //  name, writer, format, flat, products, imt, help
  static const std::vector<Method> table = {
      {"tbuffermerger", unsplit<write_tbuffermerger>, Format::Tree, true, false, false,
       "N threads, each filling its own TTree in a TBufferMergerFile and handing it to ROOT::TBufferMerger "
       "every flush (seed 003)"},
      {"rntuple", unsplit<write_rntuple>, Format::RNTuple, true, false, false,
       "ROOT::RNTupleParallelWriter, one fill context per thread"},
      {"root_imt", unsplit<write_root_imt>, Format::Tree, true, true, true,
       "one TTree filled by one thread, ROOT's implicit multi-threading compressing baskets (seed 001's ROOT)"},
      {"simple", simple_writer<simple::Serialization::Columns>, Format::Simple, true, true, false,
       "the simple per-event format, the columns' values copied (seed 001)"},
      {"simple_root", simple_writer<simple::Serialization::Root>, Format::Simple, false, true, false,
       "the same format, each data product ROOT-serialized (seed 001's; needs --workload objects)"},
  };
  return table;
}

std::string method_names(bool (*which)(const Method &)) {
  std::string names;
  for (const Method &m : methods())
    if (!which || which(m)) names += (names.empty() ? "" : ", ") + std::string(m.name);
  return names;
}

const Method &method_named(const std::string &name) {
  for (const Method &m : methods())
    if (name == m.name) return m;
  throw std::invalid_argument("unknown --method '" + name + "' (" + method_names() + ")");
}

const char *format_name(Format format) {
  switch (format) {
    case Format::Tree: return "ttree";
    case Format::RNTuple: return "rntuple";
    case Format::Simple: return "simple";
  }
  return "";
}

const char *file_suffix(const Method &method) { return method.format == Format::Simple ? ".tpsimple" : ".root"; }

Checksums read_back(const Method &method, Output &out, const EntrySource &source, const WriteSettings &s,
                    int threads) {
  switch (method.format) {
    case Format::RNTuple: return read_rntuple(out, source.schema(), s, threads);
    case Format::Simple: return read_simple(out, source);
    case Format::Tree: break;
  }
  return read_tree(out, source.schema(), s, threads);
}

}  // namespace writing

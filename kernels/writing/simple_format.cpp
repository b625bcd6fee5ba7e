#include "simple_format.hpp"

#include <fcntl.h>
#include <lz4.h>
#include <lz4hc.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "aod_products.hpp"
#include "media.hpp"

namespace writing {
namespace simple {

namespace {

constexpr char kMagic[8] = {'T', 'P', 'S', 'I', 'M', 'P', 'L', 'E'};
constexpr std::uint32_t kVersion = 2;

template <class T>
void put(std::vector<char> &out, T value) {
  const auto *p = reinterpret_cast<const char *>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

template <class T>
T get(const char *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

std::uint64_t counter_value(const Column &column, const void *data) {
  return dispatch(column.type, [&](auto tag) -> std::uint64_t {
    using T = decltype(tag);
    T value;
    std::memcpy(&value, data, sizeof(T));
    if constexpr (std::is_signed_v<T>)
      if (value < 0) throw std::runtime_error("negative counter in column " + column.name);
    return static_cast<std::uint64_t>(value);
  });
}

std::vector<char> header(const Schema &schema, Codec codec, int level, Serialization serialization) {
  std::vector<char> out(kMagic, kMagic + 8);
  put<std::uint32_t>(out, kVersion);
  put<std::uint8_t>(out, static_cast<std::uint8_t>(codec));
  put<std::uint8_t>(out, static_cast<std::uint8_t>(level));
  put<std::uint8_t>(out, static_cast<std::uint8_t>(serialization));
  put<std::uint32_t>(out, static_cast<std::uint32_t>(schema.columns.size()));
  for (const auto &c : schema.columns) {
    put<std::uint8_t>(out, static_cast<std::uint8_t>(c.type));
    put<std::int32_t>(out, c.counter);
    put<std::uint16_t>(out, static_cast<std::uint16_t>(c.name.size()));
    out.insert(out.end(), c.name.begin(), c.name.end());
  }
  return out;
}

// One LZ4 stream state per thread, reset cheaply before every event (the
// event is still compressed on its own: no earlier event is referenced).
// ROOT's choice of LZ4 variant for a level: LZ4_compress_default below 4,
// LZ4 HC at that level from 4.
class Compressor {
 public:
  static Compressor &local() {
    thread_local Compressor compressor;
    return compressor;
  }
  ~Compressor() {
    LZ4_freeStream(fast_);
    LZ4_freeStreamHC(hc_);
  }
  int compress(const char *src, char *dst, int size, int capacity, int level) {
    if (level >= 4) {
      LZ4_resetStreamHC_fast(hc_, level);
      return LZ4_compress_HC_continue(hc_, src, dst, size, capacity);
    }
    LZ4_resetStream_fast(fast_);
    return LZ4_compress_fast_continue(fast_, src, dst, size, capacity, 1);
  }

 private:
  Compressor() : fast_(LZ4_createStream()), hc_(LZ4_createStreamHC()) {
    if (!fast_ || !hc_) throw std::runtime_error("cannot allocate LZ4 state");
  }
  LZ4_stream_t *fast_;
  LZ4_streamHC_t *hc_;
};

constexpr std::size_t kRecordHeader = 16;  // stored size, raw size, hash

const ProductStore &products_of(const EntrySource &source) {
  const auto *store = dynamic_cast<const ProductStore *>(&source);
  if (!store) throw std::invalid_argument("ROOT serialization needs data products (--workload objects)");
  return *store;
}

// Event i of `source` as the bytes of its record (before compression), serialized
// on this thread: what the reader compares every record with.
void serialize_event(const EntrySource &source, Serialization serialization, std::uint64_t i, EntryView &view,
                     std::vector<unsigned char> &scratch, std::vector<char> &raw) {
  if (serialization == Serialization::Root) {
    const ProductStore &store = products_of(source);
    raw.resize(8);
    std::memcpy(raw.data(), &i, 8);
    for (std::size_t p = 0; p < store.layout().size(); ++p) serialize_product(store, i, p, raw);
  } else {
    source.get(i, view, scratch);
    serialize(view, i, raw);
  }
}

// Seed 001's ROOT serialization: "data products can be concurrently serialized;
// once all data products for an event are serialized the event is compressed".
// The tasks are (event, product) pairs, handed out in order to any thread, so the
// products of one event can be serialized side by side; the thread that serializes
// an event's last product assembles its bytes (event number, then the products in
// layout order), and compresses and appends it.
class ProductTasks {
 public:
  explicit ProductTasks(const ProductStore &store) : store_(store), products_(store.layout().size()) {}
  std::uint64_t per_event() const { return products_; }
  // Runs task t (product t % per_event() of event t / per_event()); true, with the
  // event's bytes in `raw`, when it completed its event (`split`: whether more than
  // one thread serialized that event's products).
  bool run(std::uint64_t t, std::vector<char> &raw, bool &split) {
    const std::uint64_t i = t / products_;
    const std::size_t p = static_cast<std::size_t>(t % products_);
    std::vector<char> part;
    serialize_product(store_, i, p, part);
    std::vector<std::vector<char>> parts;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Pending &event = pending_[i];
      if (event.parts.empty()) {
        event.parts.resize(products_);
        event.left = products_;
        event.first = std::this_thread::get_id();
      }
      event.split = event.split || event.first != std::this_thread::get_id();
      event.parts[p] = std::move(part);
      if (--event.left > 0) return false;
      parts = std::move(event.parts);
      split = event.split;
      pending_.erase(i);
    }
    raw.resize(8);
    std::memcpy(raw.data(), &i, 8);
    for (const auto &product : parts) raw.insert(raw.end(), product.begin(), product.end());
    return true;
  }

 private:
  struct Pending {
    std::vector<std::vector<char>> parts;
    std::size_t left = 0;
    std::thread::id first;  // the thread that serialized its first product
    bool split = false;     // another thread serialized one of the others
  };
  const ProductStore &store_;
  const std::size_t products_;
  std::mutex mutex_;
  std::unordered_map<std::uint64_t, Pending> pending_;  // events begun, not yet complete
};

// One record (size prefix and hash included) from a serialized event.
void encode(const std::vector<char> &raw, std::vector<char> &record, Codec codec, int level) {
  if (raw.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE)) throw std::runtime_error("event too large for one LZ4 block");
  const int raw_size = static_cast<int>(raw.size());
  int stored = raw_size;
  if (codec == Codec::None) {
    record.resize(kRecordHeader + raw.size());
    std::memcpy(record.data() + kRecordHeader, raw.data(), raw.size());
  } else {
    const int bound = LZ4_compressBound(raw_size);
    record.resize(kRecordHeader + static_cast<std::size_t>(bound));
    stored = Compressor::local().compress(raw.data(), record.data() + kRecordHeader, raw_size, bound, level);
    if (stored <= 0) throw std::runtime_error("LZ4 compression of an event failed");
    record.resize(kRecordHeader + static_cast<std::size_t>(stored));
  }
  const auto s = static_cast<std::uint32_t>(stored), r = static_cast<std::uint32_t>(raw_size);
  const std::uint64_t h = hash_bytes(raw.data(), raw.size(), 0);
  std::memcpy(record.data(), &s, 4);
  std::memcpy(record.data() + 4, &r, 4);
  std::memcpy(record.data() + 8, &h, 8);
}

// Records from all threads go into a shared batch under a short lock; the
// thread that fills a batch writes it (under a second lock, so writes stay
// sequential) while the others fill the next one.
class Appender {
 public:
  Appender(ByteSink &sink, std::size_t batch_bytes) : sink_(sink), batch_bytes_(batch_bytes) {
    current_.reserve(batch_bytes_ + (1 << 16));
  }
  void append(const char *data, std::size_t size) {
    std::vector<char> full;
    {
      std::lock_guard<std::mutex> lock(fill_mutex_);
      current_.insert(current_.end(), data, data + size);
      if (current_.size() < batch_bytes_) return;
      full.swap(current_);
      if (!spare_.empty()) {
        current_.swap(spare_.back());
        spare_.pop_back();
      }
      current_.reserve(batch_bytes_ + (1 << 16));
    }
    {
      std::lock_guard<std::mutex> lock(io_mutex_);
      sink_.write(full.data(), full.size());
    }
    full.clear();
    std::lock_guard<std::mutex> lock(fill_mutex_);
    spare_.push_back(std::move(full));
  }
  void flush() {
    std::lock_guard<std::mutex> fill(fill_mutex_);
    std::lock_guard<std::mutex> io(io_mutex_);
    if (!current_.empty()) sink_.write(current_.data(), current_.size());
    current_.clear();
  }

 private:
  ByteSink &sink_;
  std::size_t batch_bytes_;
  std::mutex fill_mutex_, io_mutex_;
  std::vector<char> current_;
  std::vector<std::vector<char>> spare_;
};

class FileSink : public ByteSink {
 public:
  FileSink(const std::string &path, bool fsync, Throttle *throttle) : path_(path), fsync_(fsync), throttle_(throttle) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("cannot create output file " + path + ": " + std::strerror(errno));
  }
  ~FileSink() override {
    if (fd_ >= 0) ::close(fd_);
  }
  void write(const char *data, std::size_t size) override {
    if (throttle_) throttle_->wait_for(size);
    while (size > 0) {
      const ssize_t n = ::write(fd_, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::runtime_error("writing " + path_ + " failed: " + std::strerror(errno));
      data += n;
      size -= static_cast<std::size_t>(n);
    }
  }
  void close() override {
    if (fsync_ && ::fsync(fd_) != 0) throw std::runtime_error("fsync of " + path_ + " failed: " + std::strerror(errno));
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) throw std::runtime_error("closing " + path_ + " failed: " + std::strerror(errno));
  }

 private:
  std::string path_;
  bool fsync_;
  Throttle *throttle_;
  int fd_ = -1;
};

class MemorySink : public ByteSink {
 public:
  explicit MemorySink(std::vector<char> &out) : out_(out) { out_.clear(); }
  void write(const char *data, std::size_t size) override { out_.insert(out_.end(), data, data + size); }
  void close() override {}

 private:
  std::vector<char> &out_;
};

// Sequential reads from a file or from memory; a short read is an error naming the place.
class ByteSource {
 public:
  ByteSource(const std::string &where, FILE *file, const std::vector<char> *memory)
      : where_(where), file_(file), memory_(memory) {}
  void read(void *to, std::size_t size) {
    if (file_) {
      if (std::fread(to, 1, size, file_) != size) throw std::runtime_error(where_ + " is truncated at byte " + std::to_string(offset_));
    } else {
      if (offset_ + size > memory_->size()) throw std::runtime_error(where_ + " is truncated at byte " + std::to_string(offset_));
      std::memcpy(to, memory_->data() + offset_, size);
    }
    offset_ += size;
  }
  template <class T>
  T value() {
    T v;
    read(&v, sizeof(T));
    return v;
  }
  bool at_end() {
    if (!file_) return offset_ == memory_->size();
    const int c = std::fgetc(file_);
    if (c == EOF) return true;
    std::ungetc(c, file_);
    return false;
  }
  std::uint64_t offset() const { return offset_; }

 private:
  std::string where_;
  FILE *file_;
  const std::vector<char> *memory_;
  std::uint64_t offset_ = 0;
};

// Points `view` at the columns of one event's values (columns serialization; `data`: the
// bytes after the event number), checking that they fill the event exactly.
void parse_columns(const Schema &schema, const char *data, std::size_t size, EntryView &view, const std::string &event) {
  std::size_t pos = 0;
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    const Column &column = schema.columns[c];
    const std::uint64_t count = column.jagged() ? counter_value(schema.columns[column.counter], view.data[column.counter]) : 1;
    const std::uint64_t bytes = count * type_size(column.type);
    if (pos + bytes > size) throw std::runtime_error(event + " is shorter than its columns");
    view.data[c] = data + pos;
    view.bytes[c] = static_cast<std::uint32_t>(bytes);
    pos += bytes;
  }
  if (pos != size) throw std::runtime_error(event + " has bytes beyond its columns");
}

ReadResult read_from(ByteSource &in, const std::string &where, const EntrySource *source) {
  char magic[8];
  in.read(magic, 8);
  if (std::memcmp(magic, kMagic, 8) != 0) throw std::runtime_error(where + " is not a file of the simple format (bad magic)");
  const auto version = in.value<std::uint32_t>();
  if (version != kVersion) throw std::runtime_error(where + ": unsupported version " + std::to_string(version));
  const auto codec = static_cast<Codec>(in.value<std::uint8_t>());
  if (codec != Codec::None && codec != Codec::LZ4) throw std::runtime_error(where + ": unknown codec");
  in.value<std::uint8_t>();  // level: informative only
  ReadResult result;
  result.serialization = static_cast<Serialization>(in.value<std::uint8_t>());
  if (result.serialization != Serialization::Columns && result.serialization != Serialization::Root)
    throw std::runtime_error(where + ": unknown serialization");
  const auto n_columns = in.value<std::uint32_t>();
  for (std::uint32_t c = 0; c < n_columns; ++c) {
    Column column;
    column.type = static_cast<Type>(in.value<std::uint8_t>());
    type_size(column.type);  // throws on an unknown type code
    column.counter = in.value<std::int32_t>();
    if (column.counter >= static_cast<int>(c) || column.counter < -1)
      throw std::runtime_error(where + ": column " + std::to_string(c) + " has a counter that does not come before it");
    column.name.resize(in.value<std::uint16_t>());
    in.read(column.name.data(), column.name.size());
    result.schema.columns.push_back(column);
  }
  if (source && !result.schema.same_layout(source->schema()))
    throw std::runtime_error(where + ": its columns differ from the events that were written");
  const Schema &schema = result.schema;
  result.checksums = Checksums(schema);
  std::unique_ptr<ProductDecoder> products;
  if (result.serialization == Serialization::Root) products = std::make_unique<ProductDecoder>(schema);

  std::vector<bool> seen(source ? source->entries() : 0, false);
  std::vector<char> stored, raw, expected;
  std::vector<unsigned char> scratch;
  EntryView view, original;
  view.resize(schema.columns.size());
  for (;;) {
    const std::uint64_t at = in.offset();
    const auto stored_size = in.value<std::uint32_t>();
    if (stored_size == 0) break;
    const auto raw_size = in.value<std::uint32_t>();
    const auto hash = in.value<std::uint64_t>();
    stored.resize(stored_size);
    in.read(stored.data(), stored_size);
    raw.resize(raw_size);
    if (codec == Codec::LZ4) {
      const int got = LZ4_decompress_safe(stored.data(), raw.data(), static_cast<int>(stored_size), static_cast<int>(raw_size));
      if (got != static_cast<int>(raw_size))
        throw std::runtime_error(where + ": record at byte " + std::to_string(at) + " does not decompress to its size");
    } else {
      if (stored_size != raw_size) throw std::runtime_error(where + ": record at byte " + std::to_string(at) + " has inconsistent sizes");
      raw.swap(stored);
    }
    if (hash_bytes(raw.data(), raw_size, 0) != hash)
      throw std::runtime_error(where + ": record at byte " + std::to_string(at) + " does not match its hash (damaged)");
    // Parse the event.
    if (raw_size < 8) throw std::runtime_error(where + ": record at byte " + std::to_string(at) + " is too short");
    const auto number = get<std::uint64_t>(raw.data());
    const std::string event = where + ": event " + std::to_string(number);
    if (products) products->decode(raw.data() + 8, raw_size - 8, view, event);
    else parse_columns(schema, raw.data() + 8, raw_size - 8, view, event);
    result.checksums.add(view);
    ++result.records;
    if (source) {
      if (number >= seen.size()) throw std::runtime_error(where + ": event number " + std::to_string(number) + " was never written");
      if (seen[number]) throw std::runtime_error(where + ": event " + std::to_string(number) + " appears twice");
      seen[number] = true;
      serialize_event(*source, result.serialization, number, original, scratch, expected);
      if (expected.size() != raw.size() || std::memcmp(expected.data(), raw.data(), raw.size()) != 0)
        throw std::runtime_error(where + ": event " + std::to_string(number) + " differs from the event that was written");
    }
  }
  const auto count = in.value<std::uint64_t>();
  if (count != result.records)
    throw std::runtime_error(where + ": trailer counts " + std::to_string(count) + " records, the file holds " +
                             std::to_string(result.records));
  if (!in.at_end()) throw std::runtime_error(where + " has bytes after its trailer");
  if (source && result.records != source->entries())
    throw std::runtime_error(where + " holds " + std::to_string(result.records) + " events, " +
                             std::to_string(source->entries()) + " were written");
  return result;
}

}  // namespace

Codec codec_from_name(const std::string &name) {
  if (name == "none") return Codec::None;
  if (name == "LZ4") return Codec::LZ4;
  throw std::invalid_argument("compression '" + name + "' is not available for the simple format (none, LZ4)");
}

std::unique_ptr<ByteSink> file_sink(const std::string &path, bool fsync, Throttle *throttle) {
  return std::make_unique<FileSink>(path, fsync, throttle);
}

std::unique_ptr<ByteSink> memory_sink(std::vector<char> &out) { return std::make_unique<MemorySink>(out); }

void serialize(const EntryView &entry, std::uint64_t number, std::vector<char> &out) {
  out.resize(8 + entry.total_bytes());
  std::memcpy(out.data(), &number, 8);
  std::size_t pos = 8;
  for (std::size_t c = 0; c < entry.data.size(); ++c) {
    if (entry.bytes[c]) std::memcpy(out.data() + pos, entry.data[c], entry.bytes[c]);
    pos += entry.bytes[c];
  }
}

WriteStats write(ByteSink &sink, const EntrySource &source, std::uint64_t events, int threads, Codec codec, int level,
                 std::size_t batch_bytes, Serialization serialization) {
  if (threads < 1) throw std::invalid_argument("--threads must be >= 1");
  if (serialization == Serialization::Root) products_of(source);  // fails before the file is begun
  const std::vector<char> head = header(source.schema(), codec, level, serialization);
  sink.write(head.data(), head.size());

  Appender appender(sink, batch_bytes);
  // Columns: a task is an event, taken 16 at a time; ROOT: a task is one product of an event.
  std::unique_ptr<ProductTasks> products;
  if (serialization == Serialization::Root) products = std::make_unique<ProductTasks>(products_of(source));
  const std::uint64_t tasks = products ? events * products->per_event() : events, chunk = products ? 1 : 16;
  std::atomic<std::uint64_t> next{0}, raw_bytes{0}, stored_bytes{0}, events_split{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      EntryView view;
      std::vector<unsigned char> scratch;
      std::vector<char> raw, record;
      std::uint64_t my_raw = 0, my_stored = 0;
      while (!failed) {
        const std::uint64_t begin = next.fetch_add(chunk);
        if (begin >= tasks) break;
        for (std::uint64_t t = begin; t < std::min(tasks, begin + chunk); ++t) {
          if (products) {
            bool split = false;
            if (!products->run(t, raw, split)) continue;  // its event has products left
            if (split) ++events_split;
          } else {
            serialize_event(source, serialization, t, view, scratch, raw);
          }
          encode(raw, record, codec, level);
          appender.append(record.data(), record.size());
          my_raw += raw.size();
          my_stored += record.size();
        }
      }
      raw_bytes += my_raw;
      stored_bytes += my_stored;
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(work);
  for (auto &w : workers) w.join();
  if (error) std::rethrow_exception(error);

  std::vector<char> trailer;
  put<std::uint32_t>(trailer, 0);
  put<std::uint64_t>(trailer, events);
  appender.append(trailer.data(), trailer.size());
  appender.flush();
  sink.close();
  return {events, raw_bytes.load(), stored_bytes.load(), events_split.load()};
}

ReadResult read_file(const std::string &path, const EntrySource *source) {
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  std::unique_ptr<FILE, int (*)(FILE *)> guard(file, std::fclose);
  ByteSource in(path, file, nullptr);
  return read_from(in, path, source);
}

ReadResult read_memory(const std::vector<char> &bytes, const std::string &where, const EntrySource *source) {
  ByteSource in(where, nullptr, &bytes);
  return read_from(in, where, source);
}

}  // namespace simple
}  // namespace writing

// The simple per-event format of seed 001 (a CLEO-like format): every event
// is serialized on its own, compressed on its own by any of N threads, and
// appended to one file as a length-prefixed record. Nothing couples events:
// a record can be written, read or lost alone.
//
// Layout (all integers little-endian, no padding or alignment):
//
//   file    := header record* trailer
//   header  := "TPSIMPLE" (8 bytes) | u32 version (2) | u8 codec (0 none, 1 LZ4) | u8 level
//              | u8 serialization (0 columns, 1 ROOT) | u32 n_columns | column*
//   column  := u8 type (schema.hpp: 1 bool, 2 u8, 3 i32, 4 u32, 5 u64, 6 f32, 7 f64)
//              | i32 counter (index of the counter column, -1 for a scalar)
//              | u16 name length | name bytes
//   record  := u32 stored_size (> 0) | u32 raw_size | u64 hash of the event's raw bytes
//              (hash_bytes(event, raw_size, 0) of schema.hpp) | stored_size bytes: the event,
//              compressed as one LZ4 block (codec 1; ROOT's choice of LZ4 variant:
//              LZ4_compress_default below level 4, LZ4_compress_HC(level) from 4)
//              or as it is (codec 0)
//   event   := u64 event number | the event's values, serialized
//              columns: for each column in header order its values, one for a
//                       scalar, `counter` many for an array (the counter column
//                       comes earlier in the same event): a memcpy of the values
//              ROOT:    seed 001's way, each data product (aod_products.hpp: one
//                       std::vector<aod::Type> per collection, built from the
//                       columns) as u32 size | TBufferFile::WriteObjectAny's bytes,
//                       in collection order; read back, the products are flattened
//                       into the header's columns
//   trailer := u32 0 | u64 number of records
//
// Records are appended in the order events finish, not in event order; the
// event number says which event a record is.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "schema.hpp"

namespace writing {

class Throttle;

namespace simple {

enum class Codec : std::uint8_t { None = 0, LZ4 = 1 };
enum class Serialization : std::uint8_t { Columns = 0, Root = 1 };
Codec codec_from_name(const std::string &name);  // "none" or "LZ4"; anything else is an error naming it

// Where the bytes go: a file (written with write(2), optionally throttled,
// fsync'ed on close) or memory.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(const char *data, std::size_t size) = 0;
  virtual void close() = 0;
};
std::unique_ptr<ByteSink> file_sink(const std::string &path, bool fsync, Throttle *throttle);
std::unique_ptr<ByteSink> memory_sink(std::vector<char> &out);

// The event as the format stores it in the columns serialization (before compression).
void serialize(const EntryView &entry, std::uint64_t number, std::vector<char> &out);

struct WriteStats {
  std::uint64_t records = 0, raw_bytes = 0, stored_bytes = 0;
  std::uint64_t events_split = 0;  // ROOT serialization: events whose products more than one thread serialized
};

// Writes `events` events of `source` with `threads` threads, each taking the
// next few events, serializing and compressing each and appending the record
// to a shared batch (ROOT: `source` must be a ProductStore, and a thread takes
// one product of an event at a time, so an event's products can be serialized
// concurrently; the thread that serializes its last compresses and appends it);
// a full batch (`batch_bytes`) is written by the thread that filled it while
// the others carry on filling the next.
WriteStats write(ByteSink &sink, const EntrySource &source, std::uint64_t events, int threads, Codec codec,
                 int level, std::size_t batch_bytes, Serialization serialization = Serialization::Columns);

struct ReadResult {
  Checksums checksums;
  std::uint64_t records = 0;
  Schema schema;
  Serialization serialization = Serialization::Columns;
};

// Reads a whole file (from a path, or from bytes in memory), checking its
// structure, every record's sizes and hash, and that each event number appears once.
// With `source`, every event is also compared byte for byte with the event
// of that number in `source`, and the schema with the source's.
ReadResult read_file(const std::string &path, const EntrySource *source);
ReadResult read_memory(const std::vector<char> &bytes, const std::string &where, const EntrySource *source);

}  // namespace simple
}  // namespace writing

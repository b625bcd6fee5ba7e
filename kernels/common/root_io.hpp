// ROOT I/O helpers shared by the kernels that read or write ROOT files.
#pragma once

#include <Compression.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace bench {

// ROOT's compression setting (algorithm*100 + level) for a name used in the
// config: none, ZLIB, LZ4, ZSTD, LZMA. An unknown name is an error naming it.
inline int compression_settings(const std::string &name, int level) {
  using Algorithm = ROOT::RCompressionSetting::EAlgorithm;
  if (name == "none") return 0;
  if (level < 1 || level > 9)
    throw std::invalid_argument("compression level for " + name + " must be 1..9, got " + std::to_string(level));
  if (name == "ZLIB") return ROOT::CompressionSettings(Algorithm::kZLIB, level);
  if (name == "LZ4") return ROOT::CompressionSettings(Algorithm::kLZ4, level);
  if (name == "ZSTD") return ROOT::CompressionSettings(Algorithm::kZSTD, level);
  if (name == "LZMA") return ROOT::CompressionSettings(Algorithm::kLZMA, level);
  throw std::invalid_argument("unknown compression '" + name + "' (none, ZLIB, LZ4, ZSTD, LZMA)");
}

// Writes go to `path.tmp` first and are renamed by commit(): a killed or
// failed writer never leaves a file that looks complete.
class TemporaryOutput {
 public:
  explicit TemporaryOutput(std::string path) : path_(std::move(path)), temporary_(path_ + ".tmp") {}
  ~TemporaryOutput() {
    if (!committed_) std::remove(temporary_.c_str());
  }
  const std::string &temporary() const { return temporary_; }
  void commit() {
    if (std::rename(temporary_.c_str(), path_.c_str()) != 0)
      throw std::runtime_error("cannot rename " + temporary_ + " to " + path_);
    committed_ = true;
  }

 private:
  std::string path_, temporary_;
  bool committed_ = false;
};

}  // namespace bench

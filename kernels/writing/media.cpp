#include "media.hpp"


#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace writing {

namespace {

std::string errno_text() { return std::strerror(errno); }

std::string fs_type_name(const std::string &dir) {
  struct statfs fs {};
  if (statfs(dir.c_str(), &fs) != 0) return "unknown";
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0x01021994UL: return "tmpfs";
    case 0xEF53UL: return "ext4";
    case 0x58465342UL: return "xfs";
    case 0x9123683EUL: return "btrfs";
    case 0x794c7630UL: return "overlay";
    case 0x6969UL: return "nfs";
    case 0x2fc12fc1UL: return "zfs";
    case 0x65735546UL: return "fuse";
    default: {
      char text[32];
      std::snprintf(text, sizeof text, "0x%lx", static_cast<unsigned long>(fs.f_type));
      return text;
    }
  }
}

// A TFile whose writes pass through a Throttle: the "slow" medium.
class ThrottledFile : public TFile {
 public:
  ThrottledFile(const char *path, int settings, Throttle &throttle)
      : TFile(path, "RECREATE", "", settings), throttle_(throttle) {}
  Int_t SysWrite(Int_t fd, const void *buf, Int_t len) override {
    throttle_.wait_for(static_cast<std::size_t>(len));
    return TFile::SysWrite(fd, buf, len);
  }

 private:
  Throttle &throttle_;
};

// A TMemFile that copies its finished bytes out when it is deleted (closing
// itself first), so that an owner such as TBufferMerger may delete it.
class CapturingMemFile : public TMemFile {
 public:
  CapturingMemFile(const char *name, int settings, std::vector<char> &out)
      : TMemFile(name, "RECREATE", "", settings), out_(out) {}
  ~CapturingMemFile() override {
    if (IsOpen()) Close();
    out_.resize(static_cast<std::size_t>(GetEND()));  // the file's end, not the memory TMemFile reserved
    CopyTo(out_.data(), static_cast<Long64_t>(out_.size()));
  }

 private:
  std::vector<char> &out_;
};

}  // namespace

// ---- media ------------------------------------------------------------------------------------

Medium Medium::from_options(const bench::Options &opt) {
  Medium m;
  m.kind = opt.str("medium");
  m.dir = opt.str("dir");
  m.fsync = opt.integer("fsync", 0) != 0;
  if (m.kind != "disk" && m.kind != "tmpfs" && m.kind != "memory" && m.kind != "slow")
    throw std::invalid_argument("unknown --medium '" + m.kind + "' (disk, tmpfs, memory, slow)");
  if (m.kind == "slow") {
    m.slow_bytes_per_s = opt.real("slow-mb-s") * 1e6;
    if (!(m.slow_bytes_per_s > 0)) throw std::invalid_argument("--slow-mb-s must be > 0 for --medium slow");
  }
  if (m.in_memory()) return m;
  if (m.dir.empty()) throw std::invalid_argument("--dir is required for --medium " + m.kind);
  struct stat st {};
  if (stat(m.dir.c_str(), &st) != 0)
    throw std::runtime_error("output directory " + m.dir + " (medium " + m.kind + "): " + errno_text());
  if (!S_ISDIR(st.st_mode)) throw std::runtime_error("output directory " + m.dir + " (medium " + m.kind + ") is not a directory");
  if (access(m.dir.c_str(), W_OK) != 0)
    throw std::runtime_error("output directory " + m.dir + " (medium " + m.kind + ") is not writable: " + errno_text());
  m.fs_type = fs_type_name(m.dir);
  if (m.kind == "tmpfs" && m.fs_type != "tmpfs")
    throw std::runtime_error("output directory " + m.dir + " is on " + m.fs_type + ", not tmpfs (medium tmpfs)");
  return m;
}

void Throttle::wait_for(std::size_t bytes) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (!started_) {
    started_ = true;
    start_ = now;
  }
  bytes_ += static_cast<double>(bytes);
  const auto due = start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(bytes_ / rate_));
  lock.unlock();
  if (due > now) std::this_thread::sleep_until(due);
}

Output::Output(const Medium &medium, const std::string &stem) : medium_(medium) {
  path_ = medium.in_memory() ? stem : medium.dir + "/" + stem;
  temporary_ = path_ + ".tmp";
  if (medium.throttled()) throttle_ = std::make_unique<Throttle>(medium.slow_bytes_per_s);
}

Output::~Output() { remove(); }

void Output::commit() {
  if (medium_.in_memory()) return;
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0)
    throw std::runtime_error("cannot rename " + temporary_ + " to " + path_ + ": " + errno_text());
  committed_ = true;
}

std::uint64_t Output::size() const {
  if (medium_.in_memory()) return memory_.size();
  struct stat st {};
  const std::string &p = committed_ ? path_ : temporary_;
  if (stat(p.c_str(), &st) != 0) throw std::runtime_error("cannot stat " + p + ": " + errno_text());
  return static_cast<std::uint64_t>(st.st_size);
}

void Output::remove() {
  if (medium_.in_memory()) {
    std::vector<char>().swap(memory_);
    return;
  }
  std::remove(temporary_.c_str());
  std::remove(path_.c_str());
}

void sync_file(const std::string &path) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot open " + path + " to sync it: " + errno_text());
  const int rc = fsync(fd);
  const std::string error = rc ? errno_text() : "";
  close(fd);
  if (rc) throw std::runtime_error("fsync of " + path + " failed: " + error);
}

std::unique_ptr<TFile> open_root_output(Output &output, int settings) {
  std::unique_ptr<TFile> file;
  const std::string &path = output.write_path();
  if (output.medium().in_memory())
    file = std::make_unique<CapturingMemFile>(output.path().c_str(), settings, output.memory());
  else if (output.medium().throttled())
    file = std::make_unique<ThrottledFile>(path.c_str(), settings, *output.throttle());
  else
    file.reset(TFile::Open(path.c_str(), "RECREATE", "", settings));
  if (!file || file->IsZombie() || !file->IsWritable()) {
    const std::string why = bench::RootErrors::first();
    throw std::runtime_error("cannot create output file " + output.where() + (why.empty() ? "" : ": " + why));
  }
  return file;
}

std::unique_ptr<TFile> open_root_input(Output &output) {
  std::unique_ptr<TFile> file;
  if (output.medium().in_memory())
    file = std::make_unique<TMemFile>(output.path().c_str(),
                                      TMemFile::ZeroCopyView_t(output.memory().data(), output.memory().size()));
  else
    file.reset(TFile::Open(output.path().c_str(), "READ"));
  if (!file || file->IsZombie()) throw std::runtime_error("cannot read back " + output.where());
  return file;
}

// ---- peak resident memory ---------------------------------------------------------------------

long long PeakRss::status_bytes(const char *field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(status, line))
    if (line.rfind(key, 0) == 0) {
      std::istringstream values(line.substr(key.size()));
      long long kb = 0;
      values >> kb;
      return kb * 1024;
    }
  return -1;
}

PeakRss::~PeakRss() {
  sampling_ = false;
  if (sampler_.joinable()) sampler_.join();
}

void PeakRss::start() {
  start_ = status_bytes("VmRSS");
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5" << std::flush;
  reset_ok_ = clear.good() && status_bytes("VmHWM") >= 0 && status_bytes("VmHWM") <= start_ + (1 << 20);
  if (reset_ok_) return;
  sampled_peak_ = start_;
  sampling_ = true;
  sampler_ = std::thread([this] {
    while (sampling_) {
      const long long now = status_bytes("VmRSS");
      if (now > sampled_peak_) sampled_peak_ = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
}

PeakRss::Result PeakRss::stop() {
  if (reset_ok_) return {start_, status_bytes("VmHWM"), "VmHWM after clear_refs"};
  sampling_ = false;
  if (sampler_.joinable()) sampler_.join();
  return {start_, std::max<long long>(sampled_peak_, status_bytes("VmRSS")), "VmRSS sampled every 2 ms"};
}

}  // namespace writing

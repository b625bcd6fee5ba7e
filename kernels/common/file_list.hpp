// Input lists of the kernels: one path per line (a list file, so that thousands
// of files never hit the command-line limit).
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

inline std::vector<std::string> read_lines(const std::string &path, const std::string &what) {
  if (path.empty()) throw std::invalid_argument("--" + what + " is required");
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the " + what + " " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  if (lines.empty()) throw std::runtime_error("the " + what + " " + path + " is empty");
  return lines;
}

}  // namespace bench

// How fast simdjson parses a vault-sized blob, for docs/PERFORMANCE.md (not part of the build or of make bench).
// Needs Debian's libsimdjson-dev, which the Makefile does not install:
//   apt-get install libsimdjson-dev && g++ -O2 -std=c++17 scripts/simdjson_probe.cpp -lsimdjson -o /tmp/simdjson_probe
//   /tmp/simdjson_probe
// Prints the kernel simdjson picked, the time per parse of a 1.4 MB blob (a 1 MiB vault's base64url cipher), and how
// it answers a few inputs where it differs from the yajl-based parser (big integers, surrogate escapes).
#include <simdjson.h>
#include <chrono>
#include <cstdio>
#include <string>
#include <random>
using namespace simdjson;
int main() {
  std::string cipher; std::mt19937 r(1); const char *a="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  for (int i=0;i<1398101;i++) cipher.push_back(a[r()%64]);
  std::string doc = "{\"v\":1,\"wrappedDeks\":[{\"kek_id\":\"abc\",\"dek_cipher\":\"AAAA\"}],\"cipher\":\"" + cipher + "\",\"iv\":\"AAAAAAAAAAAAAAAA\",\"tag\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"updatedUtc\":\"2026-01-01T00:00:00Z\",\"counter\":3}";
  dom::parser parser;
  std::printf("impl %s\n", get_active_implementation()->name().c_str());
  size_t total=0; auto t0=std::chrono::steady_clock::now(); int n=0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count()<2) {
    dom::element e; auto err = parser.parse(doc).get(e); if (err) { std::printf("err %s\n", error_message(err)); return 1; }
    std::string_view s; if (e["cipher"].get(s)) return 2; total+=s.size(); n++;
  }
  double secs=std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count();
  std::printf("%.3f ms per parse, %.2f GB/s\n", secs/n*1e3, doc.size()*n/secs/1e9);
  // error cases
  const char* bad[] = {"[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\ud800\\u0041\"]", "[100000000000000000000]", "[1e400]", "[-0]", "[\"a\\u0000b\"]"};
  for (auto b: bad) { dom::element e; auto err = parser.parse(padded_string(std::string(b))).get(e); std::printf("%s -> %s\n", b, err ? error_message(err) : "ok"); }
}

#include "bench/moe/moe_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace commlens::bench {

namespace {

// splitmix64: a small, well-mixed generator whose whole state is one seed, so that the
// routing of (seed, rank, token) is the same on every rank and every run.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Cumulative expert weights of the router, shared by every token of a plan.
std::vector<double> Cumulative(const MoeConfig& c) {
  std::vector<double> cum(c.experts);
  double sum = 0;
  for (int e = 0; e < c.experts; ++e) {
    sum += c.imbalance == 0 ? 1.0 : 1.0 / std::pow(e + 1.0, c.imbalance);
    cum[e] = sum;
  }
  return cum;
}

std::vector<int> Route(const MoeConfig& c, const std::vector<double>& cum, int rank, int token) {
  uint64_t state = Mix(c.seed ^ Mix((uint64_t(rank) << 32) | uint32_t(token)));
  std::vector<int> chosen;
  chosen.reserve(c.topk);
  while (static_cast<int>(chosen.size()) < c.topk) {
    state = Mix(state);
    double u = (state >> 11) * 0x1.0p-53 * cum.back();
    int e = static_cast<int>(std::upper_bound(cum.begin(), cum.end(), u) - cum.begin());
    e = std::min(e, c.experts - 1);
    if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
  }
  return chosen;
}

// For each rank holding at least one expert of the token: (rank, experts there), by rank.
std::vector<std::pair<int, int>> Destinations(const std::vector<int>& experts,
                                              int experts_per_rank) {
  std::vector<std::pair<int, int>> out;
  for (int e : experts) {
    int r = e / experts_per_rank;
    auto it = std::find_if(out.begin(), out.end(), [r](auto& d) { return d.first == r; });
    if (it == out.end()) {
      out.push_back({r, 1});
    } else {
      ++it->second;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<int> RouteToken(const MoeConfig& config, int rank, int token) {
  return Route(config, Cumulative(config), rank, token);
}

MoePlan PlanMoe(const MoeConfig& c, int rank, int nranks) {
  const std::vector<double> cum = Cumulative(c);
  const int per_rank = c.experts / nranks;
  MoePlan p;
  p.rank = rank;
  p.nranks = nranks;
  // to[q][d]: tokens of rank q for rank d, in token order; weight[q] only for q == rank.
  std::vector<std::vector<std::vector<int>>> to(nranks, std::vector<std::vector<int>>(nranks));
  std::vector<std::vector<std::pair<int, int>>> my_dest(c.tokens);
  for (int q = 0; q < nranks; ++q) {
    for (int t = 0; t < c.tokens; ++t) {
      auto dest = Destinations(Route(c, cum, q, t), per_rank);
      for (auto [d, n] : dest) to[q][d].push_back(t);
      if (q == rank) my_dest[t] = std::move(dest);
    }
  }
  p.send_begin.assign(nranks + 1, 0);
  for (int d = 0; d < nranks; ++d) {
    p.send_begin[d + 1] = p.send_begin[d] + static_cast<int64_t>(to[rank][d].size());
    p.send_tokens.insert(p.send_tokens.end(), to[rank][d].begin(), to[rank][d].end());
  }
  p.recv_begin.assign(nranks + 1, 0);
  for (int q = 0; q < nranks; ++q) {
    p.recv_begin[q + 1] = p.recv_begin[q] + static_cast<int64_t>(to[q][rank].size());
    p.recv_from_token.insert(p.recv_from_token.end(), to[q][rank].begin(), to[q][rank].end());
  }
  p.remote_recv_begin.assign(nranks, 0);
  p.return_begin.assign(nranks, 0);
  for (int d = 0; d < nranks; ++d) {
    for (int q = 0; q < rank; ++q)
      p.remote_recv_begin[d] += static_cast<int64_t>(to[q][d].size());
    for (int e = 0; e < rank; ++e) p.return_begin[d] += static_cast<int64_t>(to[d][e].size());
  }
  for (int d = 0; d < nranks; ++d) {
    int64_t recv = 0, send = 0;
    for (int q = 0; q < nranks; ++q) {
      recv += static_cast<int64_t>(to[q][d].size());
      send += static_cast<int64_t>(to[d][q].size());
    }
    p.max_recv_rows = std::max(p.max_recv_rows, recv);
    p.max_send_rows = std::max(p.max_send_rows, send);
  }
  // Combine rows: the j-th token sent to rank d comes back to row send_begin[d] + j.
  std::vector<int64_t> next(p.send_begin.begin(), p.send_begin.end() - 1);
  p.combine_begin.assign(c.tokens + 1, 0);
  for (int t = 0; t < c.tokens; ++t) {
    for (auto [d, n] : my_dest[t]) {
      p.combine_rows.push_back(static_cast<int>(next[d]++));
      p.combine_weight.push_back(n);
    }
    p.combine_begin[t + 1] = static_cast<int64_t>(p.combine_rows.size());
  }
  return p;
}

int64_t MoePlan::remote_send_rows() const {
  return send_rows() - (send_begin[rank + 1] - send_begin[rank]);
}

int64_t MoePlan::remote_recv_rows() const {
  return recv_rows() - (recv_begin[rank + 1] - recv_begin[rank]);
}

std::vector<PeerCopy> DispatchCopies(const MoePlan& p, int64_t token_bytes) {
  std::vector<PeerCopy> out(p.nranks);
  for (int d = 0; d < p.nranks; ++d)
    out[d] = {p.send_begin[d] * token_bytes, p.remote_recv_begin[d] * token_bytes,
              (p.send_begin[d + 1] - p.send_begin[d]) * token_bytes};
  return out;
}

std::vector<PeerCopy> CombineCopies(const MoePlan& p, int64_t token_bytes) {
  std::vector<PeerCopy> out(p.nranks);
  for (int q = 0; q < p.nranks; ++q)
    out[q] = {p.recv_begin[q] * token_bytes, p.return_begin[q] * token_bytes,
              (p.recv_begin[q + 1] - p.recv_begin[q]) * token_bytes};
  return out;
}

uint16_t ToBf16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

float FromBf16Bits(uint16_t bits) {
  uint32_t wide = uint32_t{bits} << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

}  // namespace commlens::bench

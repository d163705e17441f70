#include "importers/kineto/kineto_metadata_parser.h"

#include <string>

#include "importers/kineto/kineto_event_parser.h"
#include "importers/kineto/kineto_keys.h"
#include "importers/kineto/kineto_table_writer.h"

namespace commlens::importers::COMMLENS_SIMD_NS {

namespace keys = kineto_keys;
namespace ondemand = simdjson::ondemand;
using simdjson::SUCCESS;

namespace {

// A rank or size must be a non-negative int; anything else is a bad field, counted.
bool InIntRange(model::RankTrace* rank, int64_t v, const char* what) {
  if (v >= 0 && v <= INT32_MAX) return true;
  rank->stats.Count(model::ImportIssue::kMalformedEvent, 0,
                    std::string(what) + " out of range: " + std::to_string(v));
  return false;
}

void ReadDistributedInfo(ondemand::value value, model::RankTrace* rank) {
  ondemand::object info;
  if (value.get_object().get(info) != SUCCESS) return;
  for (auto result : info) {
    ondemand::field field;
    if (std::move(result).get(field) != SUCCESS) return;
    std::string_view key = FieldKey(field);
    int64_t n = 0;
    std::string_view s;
    if (key == keys::kRank && ReadInt(field.value(), &n)) {
      if (InIntRange(rank, n, "distributedInfo.rank")) rank->rank = static_cast<int>(n);
    } else if (key == keys::kWorldSize && ReadInt(field.value(), &n)) {
      if (InIntRange(rank, n, "distributedInfo.world_size")) rank->world_size = static_cast<int>(n);
    } else if (key == keys::kBackend && field.value().get_string().get(s) == SUCCESS) {
      rank->backend = std::string(s);
    } else if (key == keys::kNcclVersion && field.value().get_string().get(s) == SUCCESS) {
      rank->nccl_version = std::string(s);
    } else if (key == keys::kPgConfig) {
      ondemand::array groups;
      if (field.value().get_array().get(groups) != SUCCESS) continue;
      for (auto g : groups) {
        ondemand::object pg;
        if (g.get_object().get(pg) != SUCCESS) continue;
        model::ProcessGroup group;
        for (auto pf : pg) {
          ondemand::field f;
          if (std::move(pf).get(f) != SUCCESS) break;
          std::string_view k = FieldKey(f);
          if (k == keys::kPgName && f.value().get_string().get(s) == SUCCESS) {
            group.name = std::string(s);
          } else if (k == keys::kPgDesc && f.value().get_string().get(s) == SUCCESS) {
            group.description = std::string(s);
          } else if (k == keys::kPgSize && ReadInt(f.value(), &n)) {
            if (InIntRange(rank, n, "pg_config pg_size")) group.size = static_cast<int>(n);
          } else if (k == keys::kPgRanks) {
            // PyTorch writes a JSON list; Kineto's on-demand synthesis a quoted string.
            ondemand::array list;
            if (f.value().get_array().get(list) == SUCCESS) {
              for (auto r : list) {
                int64_t rk;
                if (r.get_int64().get(rk) == SUCCESS && InIntRange(rank, rk, "pg_config ranks"))
                  group.ranks.push_back(static_cast<int>(rk));
              }
            } else if (f.value().get_string().get(s) == SUCCESS) {
              bool out_of_range = false;
              group.ranks = ParseRankList(s, &out_of_range);
              if (out_of_range) InIntRange(rank, INT64_MAX, "pg_config ranks");
            }
          }
        }
        if (!group.name.empty()) rank->FindOrAddGroup(group);
      }
    }
  }
}

void ReadDeviceProperties(ondemand::value value, model::RankTrace* rank) {
  ondemand::array devices;
  if (value.get_array().get(devices) != SUCCESS) return;
  for (auto d : devices) {
    ondemand::object props;
    if (d.get_object().get(props) != SUCCESS) continue;
    model::Device device;
    for (auto pf : props) {
      ondemand::field f;
      if (std::move(pf).get(f) != SUCCESS) break;
      std::string_view k = FieldKey(f);
      int64_t n = 0;
      std::string_view s;
      if (k == keys::kDeviceId && ReadInt(f.value(), &n)) device.id = static_cast<int>(n);
      else if (k == keys::kDeviceName && f.value().get_string().get(s) == SUCCESS)
        device.name = std::string(s);
      else if (k == keys::kTotalGlobalMem && ReadInt(f.value(), &n)) device.memory_bytes = n;
      else if (k == keys::kNumSms && ReadInt(f.value(), &n)) device.sm_count = static_cast<int>(n);
    }
    rank->devices.push_back(device);
  }
}

}  // namespace

void ReadTopLevelField(std::string_view key, ondemand::value value, model::RankTrace* rank, int64_t* base_ns) {
  if (key == keys::kDistributedInfo) {
    ReadDistributedInfo(value, rank);
  } else if (key == keys::kDeviceProperties) {
    ReadDeviceProperties(value, rank);
  } else if (key == keys::kBaseTimeNanoseconds) {
    if (!ReadInt(value, base_ns)) *base_ns = 0;
  } else if (key == keys::kHostName) {
    std::string_view host;
    if (value.get_string().get(host) == SUCCESS) rank->hostname = std::string(host);
  }
}

}  // namespace commlens::importers::COMMLENS_SIMD_NS

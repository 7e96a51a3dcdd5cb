// The last few schedules generated, by their parameters, each with its
// executor plan. Applications repeat the same call shapes, and generating a
// schedule costs more than a small message's transfer. A shared cache is
// thread-safe (MPI_THREAD_MULTIPLE; generation runs outside the lock); one
// used by a single thread skips the lock.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>

#include "coll/algorithms.hpp"
#include "src/exec/program.hpp"
#include "src/exec/transport.hpp"

namespace gencoll {

struct CachedSchedule {
  Schedule schedule;
  ExecPlan plan;    // plan_execution(schedule), for the general executor (device buffers)
  Program program;  // compile(schedule), what host calls run
};

class ScheduleCache {
 public:
  enum class Sharing { threads, one_thread };

  explicit ScheduleCache(std::size_t capacity, Sharing sharing = Sharing::threads)
      : capacity_(capacity), locked_(sharing == Sharing::threads) {}

  // Keyed by canonical(prm): radices that clamp to one give one entry.
  std::shared_ptr<const CachedSchedule> get(const CollParams& params) {
    const CollParams prm = canonical(params);
    {
      const std::unique_lock<std::mutex> lock = guard();
      if (auto hit = find(prm)) return hit;
    }
    auto entry = std::make_shared<CachedSchedule>();
    entry->schedule = generate(prm);
    entry->plan = plan_execution(entry->schedule);
    entry->program = compile(entry->schedule);
    std::shared_ptr<const CachedSchedule> sched = std::move(entry);
    const std::unique_lock<std::mutex> lock = guard();
    // Another thread may have generated the same schedule meanwhile: one
    // entry per key, so the capacity counts distinct schedules.
    if (auto other = find(prm)) return other;
    recent_.emplace_front(prm, sched);
    if (recent_.size() > capacity_) recent_.pop_back();
    return sched;
  }

 private:
  // The entry of canonical parameters `prm`, or null; the caller holds the lock.
  std::shared_ptr<const CachedSchedule> find(const CollParams& prm) const {
    for (const auto& [key, sched] : recent_)
      if (key == prm) return sched;
    return nullptr;
  }
  // The lock, held only where other threads share the cache.
  std::unique_lock<std::mutex> guard() {
    return locked_ ? std::unique_lock<std::mutex>(mu_) : std::unique_lock<std::mutex>(mu_, std::defer_lock);
  }

  std::size_t capacity_;
  bool locked_;
  std::mutex mu_;
  std::deque<std::pair<CollParams, std::shared_ptr<const CachedSchedule>>> recent_;
};

}  // namespace gencoll

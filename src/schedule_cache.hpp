// The last few schedules generated, by their parameters. Applications repeat
// the same call shapes, and generating a schedule costs more than a small
// message's transfer. Thread-safe: MPICH may call in from several threads
// (MPI_THREAD_MULTIPLE); generation itself runs outside the lock.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>

#include "../coll/algorithms.hpp"

namespace gencoll {

class ScheduleCache {
 public:
  explicit ScheduleCache(std::size_t capacity) : capacity_(capacity) {}

  std::shared_ptr<const Schedule> get(const CollParams& prm) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [key, sched] : recent_)
        if (key == prm) return sched;
    }
    auto sched = std::make_shared<const Schedule>(generate(prm));
    std::lock_guard<std::mutex> lock(mu_);
    recent_.emplace_front(prm, sched);
    if (recent_.size() > capacity_) recent_.pop_back();
    return sched;
  }

 private:
  std::size_t capacity_;
  std::mutex mu_;
  std::deque<std::pair<CollParams, std::shared_ptr<const Schedule>>> recent_;
};

}  // namespace gencoll

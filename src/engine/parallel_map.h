// OrderedParallelMap: items pulled one at a time from a sequential producer (a file reader) are
// transformed by `fn` on worker threads and handed out in producer order. At most `max_ahead`
// items are in flight or finished-but-unread, which bounds memory. The first error (from the
// producer or from fn) is returned in order and ends the sequence.
//
// Next() is called from one consumer thread. Destruction stops the workers (a worker inside the
// producer or fn finishes that call first) and joins them.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"

namespace openglue::engine {

template <typename In, typename Out>
class OrderedParallelMap {
 public:
  using Producer = std::function<Result<std::optional<In>>()>;
  using Fn = std::function<Result<Out>(In)>;

  OrderedParallelMap(Producer producer, Fn fn, int threads, int max_ahead)
      : producer_(std::move(producer)),
        fn_(std::move(fn)),
        threads_(threads < 1 ? 1 : threads),
        max_ahead_(max_ahead < threads_ ? threads_ : max_ahead) {}

  ~OrderedParallelMap() {
    {
      MutexLock lock(&mu_);
      stop_ = true;
      cv_.SignalAll();
    }
    for (auto& worker : workers_) worker.join();
  }

  OrderedParallelMap(const OrderedParallelMap&) = delete;
  OrderedParallelMap& operator=(const OrderedParallelMap&) = delete;

  // The next output; nullopt at the end. After an error or the end, repeats it.
  Result<std::optional<Out>> Next() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (!final_status_.ok()) return final_status_;
    if (finished_) return std::optional<Out>();
    if (!started_) {
      started_ = true;
      for (int i = 0; i < threads_; ++i) workers_.emplace_back([this] { Work(); });
    }
    while (done_.find(next_out_) == done_.end()) cv_.Wait(&mu_);
    auto node = done_.extract(next_out_);
    ++next_out_;
    cv_.SignalAll();
    Slot& slot = node.mapped();
    if (!slot.status.ok()) {
      final_status_ = slot.status;
      finished_ = true;
      return final_status_;
    }
    if (!slot.value.has_value()) {
      finished_ = true;
      return std::optional<Out>();
    }
    return std::optional<Out>(std::move(*slot.value));
  }

 private:
  struct Slot {
    Status status;
    std::optional<Out> value;  // nullopt with an OK status: the end
  };

  void Work() EXCLUDES(mu_, source_mu_) {
    while (true) {
      {
        MutexLock lock(&mu_);
        while (!stop_ && !exhausted_ && next_seq_ - next_out_ >= max_ahead_) cv_.Wait(&mu_);
        if (stop_ || exhausted_) return;
      }
      std::optional<In> item;
      int64_t seq;
      {
        MutexLock source_lock(&source_mu_);
        {
          MutexLock lock(&mu_);
          if (stop_ || exhausted_) return;
        }
        Result<std::optional<In>> produced = Produce();
        MutexLock lock(&mu_);
        seq = next_seq_++;
        if (!produced.ok() || !produced->has_value()) {
          Slot end;
          if (!produced.ok()) end.status = produced.status();
          done_.emplace(seq, std::move(end));
          exhausted_ = true;
          cv_.SignalAll();
          return;
        }
        item = std::move(*produced);
      }
      Slot slot;
      Result<Out> out = Apply(std::move(*item));
      if (out.ok()) {
        slot.value.emplace(std::move(out).value());
      } else {
        slot.status = out.status();
      }
      MutexLock lock(&mu_);
      done_.emplace(seq, std::move(slot));
      cv_.SignalAll();
    }
  }

  Result<std::optional<In>> Produce() REQUIRES(source_mu_) {
    try {
      return producer_();
    } catch (const std::exception& e) {
      return Status::Internal(std::string("reader failed: ") + e.what());
    }
  }

  Result<Out> Apply(In item) {
    try {
      return fn_(std::move(item));
    } catch (const std::exception& e) {
      return Status::Internal(std::string("conversion failed: ") + e.what());
    }
  }

  Mutex source_mu_;  // serializes the producer (taken before mu_)
  Producer producer_ GUARDED_BY(source_mu_);
  const Fn fn_;  // called concurrently; must be thread-safe
  const int threads_;
  const int max_ahead_;
  std::vector<std::thread> workers_;  // only touched by the consumer thread and the destructor

  Mutex mu_;
  CondVar cv_;
  bool started_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  bool exhausted_ GUARDED_BY(mu_) = false;
  bool finished_ GUARDED_BY(mu_) = false;
  Status final_status_ GUARDED_BY(mu_);
  int64_t next_seq_ GUARDED_BY(mu_) = 0;
  int64_t next_out_ GUARDED_BY(mu_) = 0;
  std::map<int64_t, Slot> done_ GUARDED_BY(mu_);
};

}  // namespace openglue::engine

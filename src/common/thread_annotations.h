// Clang thread-safety annotations (checked by the -Wthread-safety build, `make analyze`), and a
// mutex type that carries them. libstdc++'s std::mutex has no annotations, so state shared
// between threads is guarded by openglue::Mutex and locked with MutexLock; Clang then proves
// at compile time that every access to a GUARDED_BY member holds its mutex. Under GCC the
// annotations expand to nothing.
#pragma once

#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define OG_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define OG_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) OG_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY OG_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) OG_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) OG_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) OG_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) OG_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define REQUIRES(...) OG_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) OG_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) OG_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) OG_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) OG_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) OG_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) OG_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS OG_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace openglue {

// A std::mutex the thread-safety analysis knows about.
class CAPABILITY("mutex") Mutex {
 public:
  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // For CondVar only.
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

// Holds `mu` for the enclosing scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable used with a held openglue::Mutex.
class CondVar {
 public:
  // Atomically releases `mu`, waits, and re-acquires it. `mu` must be held.
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->native(), std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait, for at most `timeout`. Returns false on timeout.
  template <typename Rep, typename Period>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->native(), std::adopt_lock);
    bool signalled = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return signalled;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace openglue

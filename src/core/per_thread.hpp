// A thread's working state of a binding (the interposition library's calls,
// the C entry point's schedules), for its collectives' hot path.
#pragma once

namespace gencoll {

// PerThread<T>::get() is the calling thread's T, made on first use.
//
// Reached through a pointer in initial-exec TLS: one load relative to the
// thread pointer, where a thread_local object of a shared library costs two
// __tls_get_addr calls per use (some 170 instructions of an 8-byte bcast
// through the interposition library, callgrind, 2026-11-30). The pointer and
// a flag are static TLS: linked or preloaded, the library gets them at
// start; opened with dlopen (the Open MPI component), from glibc's small
// spare (glibc.rtld.optional_static_tls), which dlopen reports when used up.
//
// The state outlives the thread's own teardown. At exit the main thread's
// thread-locals are destroyed before atexit handlers and static destructors
// run, and those may still call collectives (MPI allows calls until
// MPI_Finalize): the interposition library used its destroyed state there
// and the MPICH module crashed in its destroyed schedule cache
// (tests/mpi/errors_check.c). A call after the teardown gets a T for the
// rest of the process, deliberately never freed (nothing after it could).
template <class T>
class PerThread {
 public:
  static T& get() {
    T* p = ptr_;
    return p ? *p : first();
  }

 private:
  struct Owner {
    T value;
    Owner() = default;
    Owner(const Owner&) = delete;
    Owner& operator=(const Owner&) = delete;
    ~Owner() {
      ptr_ = nullptr;
      gone_ = true;
    }
  };

  [[gnu::noinline]] static T& first() {
    if (gone_) {
      ptr_ = new T();
      return *ptr_;
    }
    thread_local Owner owner;
    ptr_ = &owner.value;
    return owner.value;
  }

  [[gnu::tls_model("initial-exec")]] static thread_local T* ptr_;
  [[gnu::tls_model("initial-exec")]] static thread_local bool gone_;
};

template <class T>
[[gnu::tls_model("initial-exec")]] thread_local T* PerThread<T>::ptr_ = nullptr;
template <class T>
[[gnu::tls_model("initial-exec")]] thread_local bool PerThread<T>::gone_ = false;

}  // namespace gencoll

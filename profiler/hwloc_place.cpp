#include "profiler/hwloc_place.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace gencoll::loggp {

namespace {

struct BitmapFree {
  void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapFree>;

Bitmap new_bitmap() {
  Bitmap b(hwloc_bitmap_alloc());
  if (!b) throw std::runtime_error("hwloc: cannot allocate a bitmap");
  return b;
}

std::string as_list(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || !text) return "?";
  std::string s(text);
  std::free(text);
  return s;
}

// The one object of `type` whose CPUs meet `set`, or -1 when several do.
// A machine without such objects (no Package in some VMs) counts as one.
int only_unit(hwloc_topology_t t, hwloc_obj_type_t type, hwloc_const_cpuset_t set) {
  const int n = hwloc_get_nbobjs_by_type(t, type);
  if (n <= 0) return 0;
  int found = -1;
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t o = hwloc_get_obj_by_type(t, type, static_cast<unsigned>(i));
    if (!o->cpuset || !hwloc_bitmap_intersects(o->cpuset, set)) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(o->logical_index);
  }
  return found;
}

std::string plural(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

}  // namespace

struct Topology::Impl {
  hwloc_topology_t topo = nullptr;
  ~Impl() {
    if (topo) hwloc_topology_destroy(topo);
  }
};

Topology::Topology() : impl_(std::make_unique<Impl>()) {
  if (hwloc_topology_init(&impl_->topo) != 0) {
    impl_->topo = nullptr;
    throw std::runtime_error("hwloc: cannot initialise a topology");
  }
  // GPUs and NICs are I/O objects, dropped unless asked for.
  hwloc_topology_set_io_types_filter(impl_->topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(impl_->topo) != 0) throw std::runtime_error("hwloc: cannot load this host's topology");
}

Topology::~Topology() = default;

ProcessPlace Topology::where_am_i() const {
  hwloc_topology_t t = impl_->topo;
  ProcessPlace p;
  Bitmap set = new_bitmap();
  if (hwloc_get_cpubind(t, set.get(), HWLOC_CPUBIND_PROCESS) != 0 && hwloc_get_cpubind(t, set.get(), HWLOC_CPUBIND_THREAD) != 0)
    hwloc_bitmap_copy(set.get(), hwloc_topology_get_topology_cpuset(t));
  p.cpus = as_list(set.get());
  p.place.package = only_unit(t, HWLOC_OBJ_PACKAGE, set.get());
  p.place.numa = only_unit(t, HWLOC_OBJ_NUMANODE, set.get());
  p.bound = p.place.package >= 0 && p.place.numa >= 0;
  if (!p.bound) {
    // Unbound (or bound across units): the CPU it ran on last is a snapshot
    // the scheduler may change, which the caller reports.
    Bitmap last = new_bitmap();
    if (hwloc_get_last_cpu_location(t, last.get(), HWLOC_CPUBIND_PROCESS) == 0 ||
        hwloc_get_last_cpu_location(t, last.get(), HWLOC_CPUBIND_THREAD) == 0) {
      if (p.place.package < 0) p.place.package = only_unit(t, HWLOC_OBJ_PACKAGE, last.get());
      if (p.place.numa < 0) p.place.numa = only_unit(t, HWLOC_OBJ_NUMANODE, last.get());
      p.from_last_cpu = true;
    }
  }
  return p;
}

std::string Topology::summary() const {
  hwloc_topology_t t = impl_->topo;
  const auto count = [t](hwloc_obj_type_t type) { return std::max(hwloc_get_nbobjs_by_type(t, type), 0); };
  std::string s = plural(std::max(count(HWLOC_OBJ_PACKAGE), 1), "package", "packages") + ", " +
                  plural(count(HWLOC_OBJ_NUMANODE), "NUMA domain", "NUMA domains") + ", " +
                  plural(count(HWLOC_OBJ_CORE), "core", "cores") + ", " + plural(count(HWLOC_OBJ_PU), "PU", "PUs");
  for (hwloc_obj_type_t type : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
    if (count(type) == 0) continue;
    hwloc_obj_t c = hwloc_get_obj_by_type(t, type, 0);
    s += ", " + plural(count(type), type == HWLOC_OBJ_L3CACHE ? "L3" : "L2", type == HWLOC_OBJ_L3CACHE ? "L3s" : "L2s") +
         " of " + std::to_string(c->attr->cache.size >> 20) + " MiB";
    break;
  }
  return s;
}

std::vector<std::string> Topology::devices() const {
  hwloc_topology_t t = impl_->topo;
  std::vector<std::string> out;
  // By PCI class rather than by OS device: without hwloc's CUDA or NVML
  // plugins a GPU has no OS device, but its PCI function is always there.
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(t, nullptr); pci; pci = hwloc_get_next_pcidev(t, pci)) {
    const unsigned cls = pci->attr->pcidev.class_id;
    const char* kind = nullptr;
    if ((cls >> 8) == 0x02) kind = "network";
    else if ((cls >> 8) == 0x03) kind = "GPU";
    else if (cls == 0x0c06) kind = "InfiniBand";
    else if ((cls >> 8) == 0x12) kind = "accelerator";
    if (!kind) continue;
    char id[64];
    std::snprintf(id, sizeof id, "PCI %04x:%02x:%02x.%01x [%04x:%04x]", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
                  pci->attr->pcidev.dev, pci->attr->pcidev.func, pci->attr->pcidev.vendor_id, pci->attr->pcidev.device_id);
    std::string names;
    for (hwloc_obj_t os = pci->io_first_child; os; os = os->next_sibling)
      if (os->type == HWLOC_OBJ_OS_DEVICE && os->name) names += (names.empty() ? "" : " ") + std::string(os->name);
    hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(t, pci);
    out.push_back((names.empty() ? std::string(kind) : names + " (" + kind + ")") + ", " + id + ", near " +
                  (near ? hwloc_obj_type_string(near->type) : "?") + " L#" + std::to_string(near ? near->logical_index : 0));
  }
  return out;
}

}  // namespace gencoll::loggp

#include "src/exec/device_transport.hpp"

#include <stdexcept>

namespace gencoll {

namespace {
// Slots start on this boundary so that every copy into or out of them can use
// the widest transfers.
constexpr std::size_t kSlotAlign = 64;
std::size_t round_up(std::size_t n) { return (n + kSlotAlign - 1) / kSlotAlign * kSlotAlign; }
}  // namespace

void DeviceTransport::prepare(const Schedule& s) {
  tmp_ = static_cast<char*>(scratch_.device(static_cast<std::size_t>(s.tmp_count) * b_.elem_bytes));
  if (!stage_) return;
  // Every message gets its own slot, so a staged send never waits for an
  // earlier message to leave its memory; the schedule's messages add up to a
  // small multiple of the collective's data.
  staging_size_ = 0;
  for (const Step& st : s.steps) {
    if (st.kind == StepKind::send) staging_size_ += round_up(bytes(st.src));
    if (st.kind == StepKind::recv) staging_size_ += round_up(bytes(st.dst));
  }
  staging_ = static_cast<char*>(scratch_.pinned(staging_size_));
  staging_used_ = 0;
}

char* DeviceTransport::address(const Range& r) const {
  const std::size_t off = static_cast<std::size_t>(r.offset) * b_.elem_bytes;
  switch (r.buf) {
    case Buf::send: return const_cast<char*>(static_cast<const char*>(b_.send)) + off;
    case Buf::recv: return static_cast<char*>(b_.recv) + off;
    case Buf::tmp: return tmp_ + off;
  }
  return nullptr;
}

char* DeviceTransport::staging_slot(std::size_t n) {
  if (staging_used_ + round_up(n) > staging_size_)
    throw std::logic_error("gencoll device transport: more message bytes than the schedule announced");
  char* slot = staging_ + staging_used_;
  staging_used_ += round_up(n);
  return slot;
}

Transport::Request DeviceTransport::isend(int peer, std::uint32_t tag, const Range& src) {
  if (!stage_) return wire_.isend(peer, tag, address(src), src.count);
  char* slot = staging_slot(bytes(src));
  ops_.copy(slot, address(src), bytes(src));
  return wire_.isend(peer, tag, slot, src.count);
}

Transport::Request DeviceTransport::irecv(int peer, std::uint32_t tag, const Range& dst) {
  if (!stage_) return wire_.irecv(peer, tag, address(dst), dst.count);
  char* slot = staging_slot(bytes(dst));
  const Request r = wire_.irecv(peer, tag, slot, dst.count);
  landings_.emplace(r, Landing{slot, address(dst), bytes(dst)});
  return r;
}

void DeviceTransport::wait_some(std::vector<Request>& done) {
  const std::size_t first = done.size();
  wire_.wait_some(done);
  if (landings_.empty()) return;
  for (std::size_t i = first; i < done.size(); ++i) {
    const auto it = landings_.find(done[i]);
    if (it == landings_.end()) continue;  // a send
    ops_.copy(it->second.dst, it->second.slot, it->second.bytes);
    landings_.erase(it);
  }
}

void DeviceTransport::reduce(const Range& in, const Range& inout) { fold(&in, 1, inout); }

void DeviceTransport::fold(const Range* in, std::size_t n, const Range& inout) {
  if (inout.count == 0) return;
  if (!b_.reduction) throw std::logic_error("gencoll device transport: a reduction step without an op");
  // One pass over all operands, left to right as the host path folds them
  // (the kernel's first operand is MPI_Reduce_local's `in`); the result
  // overwrites the last, which every element reads before it is written.
  operands_.clear();
  for (std::size_t i = 0; i < n; ++i) operands_.push_back(address(in[i]));
  operands_.push_back(address(inout));
  ops_.reduce(b_.reduction->type, b_.reduction->op, operands_.data(), operands_.size(), address(inout),
              static_cast<std::size_t>(inout.count));
}

void DeviceTransport::copy(const Range& src, const Range& dst) {
  if (dst.count == 0) return;
  const char* from = address(src);
  char* to = address(dst);
  if (from == to) return;  // MPI_IN_PLACE: the input already sits in the result
  ops_.copy(to, from, bytes(dst));
}

void DeviceTransport::permute(const Range& region, const PermutationSpec& spec) {
  if (spec.unit_count == 0) return;
  ops_.permute(address(region), static_cast<std::size_t>(spec.unit_count) * b_.elem_bytes, unit_destinations(spec));
}

}  // namespace gencoll

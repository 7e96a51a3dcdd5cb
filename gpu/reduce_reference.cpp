#include <cstring>
#include <stdexcept>
#include <string>

#include "gpu/reduce.hpp"
#include "gpu/reduce_ops.hpp"

namespace gencoll::gpu {

const char* to_string(ElemType t) {
  static const char* const names[kElemTypes] = {
      "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "boolean", "float16", "bfloat16",
      "float32", "float64", "complex32", "complex64", "float_int", "double_int", "long_int", "int_int", "short_int",
      "float_float", "double_double"};
  const auto i = static_cast<int>(t);
  return i < kElemTypes ? names[i] : "?";
}

const char* to_string(ReduceOp op) {
  static const char* const names[kReduceOps] = {"sum",  "prod", "min", "max",  "land",   "lor",
                                                "lxor", "band", "bor", "bxor", "minloc", "maxloc"};
  const auto i = static_cast<int>(op);
  return i < kReduceOps ? names[i] : "?";
}

std::size_t elem_size(ElemType t) {
  std::size_t size = 0;
  with_elem_type(t, [&](auto tag) { size = sizeof(typename decltype(tag)::type); });
  return size;
}

bool supported(ElemType t, ReduceOp op) {
  if (static_cast<int>(t) >= kElemTypes || static_cast<int>(op) >= kReduceOps) return false;
  // C _Bool has only the logical ops; a byte is uint8 and takes the bitwise ones.
  if (t == ElemType::boolean) return op == ReduceOp::land || op == ReduceOp::lor || op == ReduceOp::lxor;
  bool ok = false;
  with_elem_type(t, [&](auto type) {
    with_reduce_op(op, [&](auto o) { ok = decltype(o)::type::template valid<typename decltype(type)::type>; });
  });
  return ok;
}

namespace {

template <typename T, typename Op>
void fold(const void* const* in, std::size_t n, void* out, std::size_t count) {
  // memcpy, not dereferences: the buffers need only byte alignment.
  for (std::size_t i = 0; i < count; ++i) {
    T acc, x;
    std::memcpy(&acc, static_cast<const char*>(in[0]) + i * sizeof(T), sizeof(T));
    for (std::size_t j = 1; j < n; ++j) {
      std::memcpy(&x, static_cast<const char*>(in[j]) + i * sizeof(T), sizeof(T));
      acc = Op::apply(acc, x);
    }
    std::memcpy(static_cast<char*>(out) + i * sizeof(T), &acc, sizeof(T));
  }
}

}  // namespace

void reduce_reference(ElemType t, ReduceOp op, const void* const* in, std::size_t n, void* out, std::size_t count) {
  if (!supported(t, op))
    throw std::invalid_argument(std::string("reduce_reference: ") + to_string(op) + " is not defined on " + to_string(t));
  if (n == 0) throw std::invalid_argument("reduce_reference: no input");
  with_elem_type(t, [&](auto type) {
    using T = typename decltype(type)::type;
    with_reduce_op(op, [&](auto o) {
      using Op = typename decltype(o)::type;
      if constexpr (Op::template valid<T>) fold<T, Op>(in, n, out, count);
    });
  });
}

}  // namespace gencoll::gpu

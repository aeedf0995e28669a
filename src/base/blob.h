// Blob: immutable bytes that either own their storage or view memory kept
// alive by an owner (a memory-mapped program file, say). Copies are cheap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace gpuu {

class Blob {
 public:
  Blob() = default;

  static Blob copy_of(const void* data, size_t size) {
    auto bytes = std::make_shared<std::vector<uint8_t>>(size);
    if (size) std::memcpy(bytes->data(), data, size);
    Blob b;
    b.data_ = bytes->data();
    b.size_ = size;
    b.owner_ = std::move(bytes);
    return b;
  }
  static Blob take(std::vector<uint8_t> bytes) {
    auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
    Blob b;
    b.data_ = owned->data();
    b.size_ = owned->size();
    b.owner_ = std::move(owned);
    return b;
  }
  // Views [data, data+size) without copying; `owner` keeps that memory alive.
  static Blob view(const void* data, size_t size, std::shared_ptr<const void> owner) {
    Blob b;
    b.data_ = static_cast<const uint8_t*>(data);
    b.size_ = size;
    b.owner_ = std::move(owner);
    return b;
  }

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::shared_ptr<const void>& owner() const { return owner_; }
  bool same_bytes(const Blob& other) const {
    return size_ == other.size_ && (size_ == 0 || std::memcmp(data_, other.data_, size_) == 0);
  }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::shared_ptr<const void> owner_;
};

}  // namespace gpuu

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

  // A view of a read-only file mapping's clean pages (a program mapped from
  // its file): a reader done with the bytes may drop them from memory with
  // drop_file_pages, and they come back from the file if read again.
  static Blob file_view(const void* data, size_t size, std::shared_ptr<const void> owner) {
    Blob b = view(data, size, std::move(owner));
    b.file_pages_ = true;
    return b;
  }
  // Bytes [offset, offset + size) of this blob, sharing its owner (and its file pages).
  Blob sub_view(size_t offset, size_t size) const {
    Blob b = view(data_ + offset, size, owner_);
    b.file_pages_ = file_pages_;
    return b;
  }
  // For a file view: releases the whole pages it covers (madvise), so that
  // bytes copied elsewhere (uploaded to a device) are not held twice. Pages
  // shared with neighbouring bytes are dropped too: they are clean, so a
  // later read refaults them from the file. Otherwise nothing.
  void drop_file_pages() const;

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
  bool file_pages_ = false;
};

}  // namespace gpuu

// Blob: immutable bytes that either own their storage, view memory kept
// alive by an owner (a memory-mapped program file, say), or are made on
// demand from other blobs (derived). Copies are cheap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
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
  // `size` bytes that `make` writes from `sources` when they are needed: a
  // weight rearranged into a kernel's layout, sibling weights end to end.
  // Writing them into device memory (write_to) keeps no host copy; data()
  // makes one, held while a copy of this blob lives. Its name() is `how`
  // applied to its sources' names, so two blobs made alike from the same
  // bytes name one content (gpu/shared_constants.h shares a device copy by it).
  using Make = std::function<void(const std::vector<Blob>& sources, uint8_t* out)>;
  static Blob derived(std::vector<Blob> sources, std::string how, size_t size, Make make);

  // Bytes [offset, offset + size) of this blob, sharing its owner (and its file pages).
  Blob sub_view(size_t offset, size_t size) const {
    Blob b = view(data() + offset, size, owner());
    b.file_pages_ = file_pages_;
    return b;
  }
  // For a file view: releases the whole pages it covers (madvise), so that
  // bytes copied elsewhere (uploaded to a device) are not held twice. Pages
  // shared with neighbouring bytes are dropped too: they are clean, so a
  // later read refaults them from the file. A derived blob drops its
  // sources'. Otherwise nothing.
  void drop_file_pages() const;

  const uint8_t* data() const { return derived_ ? derived_->made() : data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::shared_ptr<const void>& owner() const { return owner_; }
  bool same_bytes(const Blob& other) const {
    return size_ == other.size_ && (size_ == 0 || std::memcmp(data(), other.data(), size_) == 0);
  }
  // Writes the bytes to `out` (size() of them), making none on the host.
  void write_to(uint8_t* out) const;

  // What the bytes are, for sharing by content without comparing it: a
  // stored blob is its address and size (kept taken by whoever holds the
  // blob), a derived one its recipe of its sources' names.
  std::string name() const;
  bool is_derived() const { return derived_ != nullptr; }
  // This blob without host bytes that data() made: it keeps name() taken
  // (its sources alive) for as long as it is held, at no more memory.
  Blob without_made_bytes() const;

 private:
  struct Derived {
    std::vector<Blob> sources;
    std::string how;
    size_t size = 0;
    Make make;
    mutable std::once_flag once;
    mutable std::vector<uint8_t> bytes;
    const uint8_t* made() const;
  };

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::shared_ptr<const void> owner_;  // a derived blob's: its Derived
  const Derived* derived_ = nullptr;     // kept alive by owner_
  bool file_pages_ = false;
};

}  // namespace gpuu

// Vulkan enum names for VGF dumps and messages, without pulling vulkan.h into
// the VGF codec (VGF stores these enums as raw u32 values).
#pragma once

#include <cstdint>

namespace gpuu::vgf {

// "VK_FORMAT_R32_SFLOAT" for 100; nullptr for a value this table does not know.
const char* vk_format_name(uint32_t vk_format);
// "VK_DESCRIPTOR_TYPE_TENSOR_ARM" for 1000460000; nullptr when unknown (also for
// VGF's 0xFFFFFFFF "no descriptor type", which callers name themselves).
const char* vk_descriptor_type_name(uint32_t vk_descriptor_type);

}  // namespace gpuu::vgf

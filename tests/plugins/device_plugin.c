/* A device plugin for the tests: takes "reshape" (a copy of the bytes),
 * records a vkCmdCopyBuffer on the shared device once at init and hands it to
 * the runtime's submit at each execute. C99. Built twice: against the current
 * gpuu_backend.h, and against the frozen API 1.0 header (PLUGIN_ID
 * "AcmeOldCopy"), which proves an old plugin still loads and runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "gpuu_backend.h"

#ifndef PLUGIN_ID
#define PLUGIN_ID "AcmeCopy"
#endif

typedef struct copy_delegate {
  VkDevice device;
  VkCommandPool pool;
  VkCommandBuffer cb;
  PFN_vkDestroyCommandPool destroy_pool;
  const gpuu_plugin_vulkan* vulkan;
} copy_delegate;

static int available(void) { return 1; }

static const char* check(const gpuu_plugin_graph* g, const gpuu_plugin_node* n) {
  (void)g;
  return strcmp(n->op, "reshape") == 0 ? NULL : PLUGIN_ID " takes reshape only";
}

static int preprocess(const gpuu_plugin_graph* g, const gpuu_plugin_compile_spec* s, size_t c, gpuu_plugin_bytes* out,
                      char* e, size_t ec) {
  (void)s, (void)c;
  if (g->node_count != 1 || g->input_count != 1 || g->output_count != 1) {
    snprintf(e, ec, PLUGIN_ID ": one reshape per region");
    return 1;
  }
  out->data = NULL;
  out->size = 0;
  return 0;
}

static void free_bytes(gpuu_plugin_bytes* b) { (void)b; }

#define LOAD(name) PFN_##name name = (PFN_##name)get_device(device, #name)

static int init(const gpuu_plugin_init_args* a, void** h, char* e, size_t ec) {
  if (a->input_count != 1 || a->output_count != 1 || a->inputs[0].size > a->outputs[0].size) {
    snprintf(e, ec, PLUGIN_ID ": needs one input no larger than its one output");
    return 1;
  }
  PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)a->vulkan->get_instance_proc_addr;
  PFN_vkGetDeviceProcAddr get_device =
      (PFN_vkGetDeviceProcAddr)gipa((VkInstance)a->vulkan->instance, "vkGetDeviceProcAddr");
  VkDevice device = (VkDevice)a->vulkan->device;
  LOAD(vkCreateCommandPool);
  LOAD(vkAllocateCommandBuffers);
  LOAD(vkBeginCommandBuffer);
  LOAD(vkCmdPipelineBarrier);
  LOAD(vkCmdCopyBuffer);
  LOAD(vkEndCommandBuffer);
  copy_delegate* d = calloc(1, sizeof *d);
  d->device = device;
  d->vulkan = a->vulkan;
  d->destroy_pool = (PFN_vkDestroyCommandPool)get_device(device, "vkDestroyCommandPool");
  VkCommandPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = a->vulkan->queue_family_index;
  VkCommandBufferAllocateInfo alloc = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  if (vkCreateCommandPool(device, &pool_info, NULL, &d->pool) != VK_SUCCESS) {
    free(d);
    snprintf(e, ec, PLUGIN_ID ": vkCreateCommandPool failed");
    return 1;
  }
  alloc.commandPool = d->pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  vkAllocateCommandBuffers(device, &alloc, &d->cb);
  vkBeginCommandBuffer(d->cb, &begin);
  VkMemoryBarrier before = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  before.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
  before.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(d->cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, NULL, 0, NULL);
  VkBufferCopy region = {a->inputs[0].offset, a->outputs[0].offset, a->inputs[0].size};
  vkCmdCopyBuffer(d->cb, (VkBuffer)a->inputs[0].buffer, (VkBuffer)a->outputs[0].buffer, 1, &region);
  VkMemoryBarrier after = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  after.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  after.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(d->cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0, NULL, 0, NULL);
  vkEndCommandBuffer(d->cb);
  *h = d;
  return 0;
}

static int execute(void* h, char* e, size_t ec) {
  copy_delegate* d = h;
  return d->vulkan->submit(d->vulkan->runtime, d->cb, e, ec);
}

static void destroy(void* h) {
  copy_delegate* d = h;
  d->destroy_pool(d->device, d->pool, NULL);
  free(d);
}

static const char* const ops[] = {"reshape"};

static const gpuu_backend_plugin plugin = {
    sizeof(gpuu_backend_plugin), GPUU_BACKEND_API_VERSION_MAJOR, GPUU_BACKEND_API_VERSION_MINOR, PLUGIN_ID, 2, 0, 0.5,
    ops, 1, 0x3Fu, available, check, preprocess, free_bytes, init, execute, destroy};

GPUU_BACKEND_EXPORT const gpuu_backend_plugin* gpuu_backend_plugin_get(void) { return &plugin; }

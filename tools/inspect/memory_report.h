// gpuu-inspect --memory: a program's memory plan as text or JSON.
#pragma once

#include <string>

#include "program/program.h"
#include "runtime/memory_plan.h"

namespace gpuu::inspect {

std::string render_memory_text(const program::Program& program, const runtime::MemoryPlan& plan,
                               const std::string& path);
std::string render_memory_json(const program::Program& program, const runtime::MemoryPlan& plan,
                               const std::string& path);

}  // namespace gpuu::inspect

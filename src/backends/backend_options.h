// Load-time backend options (after ExecuTorch's load-time backend options):
// each backend declares the keys it takes, the application sets
// {backend id, key, value} triples when it creates a session, and each
// delegate's backend receives only its own, every declared key filled in.
// One generic mechanism: no backend's option appears anywhere but in its
// own declaration.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace gpuu::backends {

class Backend;

// One option key a backend declares.
struct OptionDecl {
  std::string key;
  // The values it takes; empty: free-form (the backend checks the value
  // when a delegate initialises).
  std::vector<std::string> allowed;
  std::string default_value;
  std::string description;  // one line, for gpuu-inspect --backends and docs
};

// One option the application sets for the delegates of one backend.
struct BackendOption {
  std::string backend;  // a registered backend id
  std::string key;
  std::string value;
};

// What one backend receives at init: each key it declares, with the
// application's value or the declared default.
using OptionValues = std::map<std::string, std::string>;

// Every problem with `options` against the declarations of `registered`, in
// the order given: an id no backend has (naming the registered ids), a key
// the backend does not declare (naming its keys), a value outside a key's
// allowed set (naming them), a key set twice. An option for a registered
// backend the program has no delegate of is fine.
std::vector<std::string> option_problems(const std::vector<Backend*>& registered,
                                         const std::vector<BackendOption>& options);

// Ok for no problems, else kInvalidArgument "backend options: <p1>; <p2>; ...".
Status options_status(const std::vector<std::string>& problems);

// `backend`'s own values among `options` (checked by option_problems), with
// every key it declares and does not get set to its default.
OptionValues option_values(const Backend& backend, const std::vector<BackendOption>& options);

// "Id:key=value", the spelling of one option in messages and on command lines.
std::string describe_option(const BackendOption& option);

}  // namespace gpuu::backends

// Op schemas and shape inference for every registered op. Each infer function
// checks everything it reads; errors go through InferContext::fail so they
// always start with the node and op, then name the input or attribute.
#include "graph/op_registry.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/json.h"
#include "graph/grid_sample.h"
#include "graph/index_math.h"
#include "graph/resize_index.h"

namespace gpuu::graph {

const char* attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kString: return "string";
    case AttrKind::kInts: return "ints";
    case AttrKind::kFloats: return "floats";
  }
  return "?";
}

// AttrValue's alternatives are declared in AttrKind's order.
AttrKind attr_kind_of(const AttrValue& value) { return static_cast<AttrKind>(value.index()); }

bool OpSchema::input_optional(size_t index) const {
  if (inputs.empty()) return false;
  return index < inputs.size() ? inputs[index].optional : (variadic() && inputs.back().optional);
}

const std::string& OpSchema::input_name(size_t index) const {
  static const std::string kUnnamed = "input";
  if (inputs.empty()) return kUnnamed;
  return index < inputs.size() ? inputs[index].name : inputs.back().name;
}

const AttrSpec* OpSchema::find_attr(std::string_view attr) const {
  for (const AttrSpec& a : attrs) {
    if (a.name == attr) return &a;
  }
  return nullptr;
}

bool OpSchema::accepts_dtype(DType dtype) const {
  return dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

namespace {

// The attribute's value where it is present and holds a T, else nullptr.
template <typename T>
const T* attr_value(const AttrMap& attrs, const std::string& name) {
  auto it = attrs.find(name);
  return it == attrs.end() ? nullptr : std::get_if<T>(&it->second);
}

}  // namespace

int64_t attr_int(const AttrMap& attrs, const std::string& name, int64_t fallback) {
  const int64_t* v = attr_value<int64_t>(attrs, name);
  return v ? *v : fallback;
}

double attr_float(const AttrMap& attrs, const std::string& name, double fallback) {
  const double* v = attr_value<double>(attrs, name);
  return v ? *v : fallback;
}

std::string attr_string(const AttrMap& attrs, const std::string& name, const std::string& fallback) {
  const std::string* v = attr_value<std::string>(attrs, name);
  return v ? *v : fallback;
}

std::vector<int64_t> attr_ints(const AttrMap& attrs, const std::string& name) {
  const auto* v = attr_value<std::vector<int64_t>>(attrs, name);
  return v ? *v : std::vector<int64_t>{};
}

std::vector<double> attr_floats(const AttrMap& attrs, const std::string& name) {
  const auto* v = attr_value<std::vector<double>>(attrs, name);
  return v ? *v : std::vector<double>{};
}

bool has_attr(const AttrMap& attrs, const std::string& name) { return attrs.count(name) != 0; }

int64_t normalize_axis(int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return -1;
  return axis < 0 ? axis + r : axis;
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Walk from the trailing dim; a missing leading dim acts as 1.
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    int64_t d;
    if (da == db || db == 1) {
      d = da;
    } else if (da == 1) {
      d = db;
    } else {
      return err(StatusCode::kInvalidArgument, "shapes ", shape_to_string(a), " and ", shape_to_string(b),
                 " do not broadcast (dim ", da, " vs ", db, " at ", i + 1, " from the end)");
    }
    out[rank - 1 - i] = d;
  }
  return out;
}

namespace {

std::string join_dtypes(const std::vector<DType>& dtypes) {
  std::string s;
  for (size_t i = 0; i < dtypes.size(); ++i) s += (i ? ", " : "") + std::string(dtype_name(dtypes[i]));
  return s;
}

std::string ints_to_string(const std::vector<int64_t>& v) { return shape_to_string(v); }

}  // namespace

// Everything an infer function needs: the node, its input values (nullptr for
// absent optional inputs), its resolved attributes, and the outputs it emits.
class InferContext {
 public:
  InferContext(const Graph& g, const Node& n, const OpSchema& s) : graph(g), node(n), schema(s) {}

  const Graph& graph;
  const Node& node;
  const OpSchema& schema;
  std::vector<const Value*> in;
  AttrMap attrs;
  std::vector<Value> out;

  template <typename... Parts>
  Status fail(const Parts&... parts) const {
    return err(StatusCode::kInvalidArgument, "node '", node.name, "' (", node.op, "): ", parts...);
  }

  // "input 1 (weight 'w')": position, role and value name.
  std::string input_desc(size_t i) const {
    std::string d = "input " + std::to_string(i) + " (" + schema.input_name(i);
    if (i < in.size() && in[i]) d += " '" + in[i]->name + "'";
    return d + ")";
  }
  const Value* input(size_t i) const { return i < in.size() ? in[i] : nullptr; }
  const Value& x(size_t i) const { return *in[i]; }
  size_t rank(size_t i) const { return in[i]->shape.size(); }

  void emit(DType dtype, Shape shape) {
    Value v;
    v.dtype = dtype;
    v.shape = std::move(shape);
    out.push_back(std::move(v));
  }

  Status expect_dtype(size_t i, const std::vector<DType>& allowed) const {
    const Value* v = input(i);
    if (!v || allowed.empty() || std::find(allowed.begin(), allowed.end(), v->dtype) != allowed.end()) {
      return Status::Ok();
    }
    return fail(input_desc(i), " has dtype ", dtype_name(v->dtype), ", but ", node.op, " accepts ",
                join_dtypes(allowed), " there");
  }
  Status expect_schema_dtype(size_t i) const { return expect_dtype(i, schema.dtypes); }

  Status expect_same_dtype(size_t i, size_t j) const {
    const Value* a = input(i);
    const Value* b = input(j);
    if (!a || !b || a->dtype == b->dtype) return Status::Ok();
    return fail(input_desc(i), " has dtype ", dtype_name(a->dtype), " but ", input_desc(j), " has ",
                dtype_name(b->dtype), "; they must match");
  }

  Status expect_rank(size_t i, size_t r) const {
    if (rank(i) == r) return Status::Ok();
    return fail(input_desc(i), " must have rank ", r, ", got shape ", shape_to_string(x(i).shape));
  }
  Status expect_min_rank(size_t i, size_t r) const {
    if (rank(i) >= r) return Status::Ok();
    return fail(input_desc(i), " must have rank >= ", r, ", got shape ", shape_to_string(x(i).shape));
  }

  Result<Shape> broadcast(const Shape& a, const Shape& b, const std::string& what) const {
    Result<Shape> s = broadcast_shapes(a, b);
    if (!s.ok()) return fail(what, ": ", s.status().message());
    return s;
  }

  int64_t i64(const char* name) const { return attr_int(attrs, name); }
  double f64(const char* name) const { return attr_float(attrs, name); }
  std::string str(const char* name) const { return attr_string(attrs, name); }
  std::vector<int64_t> ints(const char* name) const { return attr_ints(attrs, name); }

  // An axis attribute in [-rank, rank), returned in [0, rank).
  Result<int64_t> axis_attr(const char* name, size_t r) const {
    int64_t a = i64(name);
    int64_t n = normalize_axis(a, r);
    if (n < 0) {
      return fail("attribute '", name, "' = ", a, " is out of range for rank ", r, " (valid: ", -static_cast<int64_t>(r),
                  "..", static_cast<int64_t>(r) - 1, ")");
    }
    return n;
  }

  // An ints attribute of exactly `len` entries, each in [lo, hi].
  Result<std::vector<int64_t>> ints_attr(const char* name, size_t len, int64_t lo, int64_t hi) const {
    std::vector<int64_t> v = ints(name);
    if (v.size() != len) {
      return fail("attribute '", name, "' must have ", len, " entries, got ", v.size(), " ", ints_to_string(v));
    }
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] < lo || v[i] > hi) {
        return fail("attribute '", name, "' entry ", i, " = ", v[i], " is out of range [", lo, ", ", hi, "]");
      }
    }
    return v;
  }

  // An ints attribute of axes, each in [-rank, rank) and none named twice; returned in [0, rank).
  Result<std::vector<int64_t>> axes_attr(const char* name, size_t r) const {
    std::vector<int64_t> axes = ints(name);
    std::vector<bool> seen(r, false);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = normalize_axis(axes[i], r);
      if (a < 0) return fail("attribute '", name, "' entry ", i, " = ", axes[i], " is out of range for rank ", r);
      if (seen[static_cast<size_t>(a)]) return fail("attribute '", name, "' names axis ", a, " twice");
      seen[static_cast<size_t>(a)] = true;
      axes[i] = a;
    }
    return axes;
  }

  Result<int64_t> int_attr_in(const char* name, int64_t lo, int64_t hi) const {
    int64_t v = i64(name);
    if (v < lo || v > hi) return fail("attribute '", name, "' = ", v, " is out of range [", lo, ", ", hi, "]");
    return v;
  }
};

namespace {

const std::vector<DType> kFloat = {DType::kF32, DType::kF16};
const std::vector<DType> kFloatI32I8 = {DType::kF32, DType::kF16, DType::kI32, DType::kI8};
const std::vector<DType> kFloatI32I16I8 = {DType::kF32, DType::kF16, DType::kI32, DType::kI16, DType::kI8};
const std::vector<DType> kNumeric = {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kI8};
const std::vector<DType> kIndex = {DType::kI32, DType::kI64};
const std::vector<DType> kFloatInt = {DType::kF32, DType::kF16, DType::kI32, DType::kI64};
const std::vector<DType> kBits = {DType::kI32, DType::kI64, DType::kBool};
const std::vector<DType> kAny = {};

// ---- elementwise -----------------------------------------------------------

Status infer_unary(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  if (c.node.op == "gelu") {
    std::string a = c.str("approximate");
    if (a != "none" && a != "tanh") {
      return c.fail("attribute 'approximate' must be \"none\" or \"tanh\", got \"", a, "\"");
    }
  }
  c.emit(c.x(0).dtype, c.x(0).shape);
  return Status::Ok();
}

Status infer_binary(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(1, 0));
  GPUU_ASSIGN_OR_RETURN(Shape s, c.broadcast(c.x(0).shape, c.x(1).shape, "inputs 0 and 1"));
  c.emit(c.x(0).dtype, std::move(s));
  return Status::Ok();
}

Status infer_compare(InferContext& c) {
  GPUU_RETURN_IF_ERROR(infer_binary(c));
  c.out.back().dtype = DType::kBool;
  return Status::Ok();
}

// isnan, isinf, logical_not: the input's shape, bool out.
Status infer_predicate(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  c.emit(DType::kBool, c.x(0).shape);
  return Status::Ok();
}

Status infer_clamp(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  for (const char* name : {"min", "max"}) {
    if (has_attr(c.attrs, name) && std::isnan(c.f64(name))) return c.fail("attribute '", name, "' is NaN");
  }
  if (has_attr(c.attrs, "min") && has_attr(c.attrs, "max") && c.f64("min") > c.f64("max")) {
    return c.fail("attribute 'min' (", c.f64("min"), ") is greater than 'max' (", c.f64("max"), ")");
  }
  c.emit(c.x(0).dtype, c.x(0).shape);
  return Status::Ok();
}

Status infer_where(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_dtype(0, {DType::kBool}));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(2, 1));
  GPUU_ASSIGN_OR_RETURN(Shape s, c.broadcast(c.x(0).shape, c.x(1).shape, "inputs 0 and 1"));
  GPUU_ASSIGN_OR_RETURN(s, c.broadcast(s, c.x(2).shape, "inputs 0, 1 and 2"));
  c.emit(c.x(1).dtype, std::move(s));
  return Status::Ok();
}

Status infer_cast(InferContext& c) {
  std::string name = c.str("dtype");
  DType to;
  if (!parse_dtype(name, &to)) {
    return c.fail("attribute 'dtype' = \"", name, "\" is not a dtype (f32, f16, i32, i64, i8, bool)");
  }
  c.emit(to, c.x(0).shape);
  return Status::Ok();
}

// ---- linear algebra ---------------------------------------------------------

// Like the other infer functions, this opens with expect_* lines of one shape:
// each list states its own op's dtype and rank rules, kept where the op is read.
Status infer_matmul(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(1, 0));
  GPUU_RETURN_IF_ERROR(c.expect_min_rank(0, 2));
  GPUU_RETURN_IF_ERROR(c.expect_min_rank(1, 2));
  const Shape& a = c.x(0).shape;
  const Shape& b = c.x(1).shape;
  int64_t k_a = a[a.size() - 1], k_b = b[b.size() - 2];
  if (k_a != k_b) {
    return c.fail("inner dims differ: ", c.input_desc(0), " ", shape_to_string(a), " has K=", k_a, ", ",
                  c.input_desc(1), " ", shape_to_string(b), " has K=", k_b);
  }
  GPUU_ASSIGN_OR_RETURN(Shape batch, c.broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2),
                                                 "batch dims of inputs 0 and 1"));
  batch.push_back(a[a.size() - 2]);
  batch.push_back(b[b.size() - 1]);
  c.emit(c.x(0).dtype, std::move(batch));
  return Status::Ok();
}

// Optional input 2 (bias) of linear and the convs: one entry per output channel.
Status check_bias(InferContext& c, int64_t out_channels) {
  if (const Value* bias = c.input(2)) {
    if (bias->shape != Shape{out_channels}) {
      return c.fail(c.input_desc(2), " must have shape [", out_channels, "], got ", shape_to_string(bias->shape));
    }
  }
  return Status::Ok();
}

// Infer functions open and close alike (c.x reads, return Ok); each rule is its own.
Status infer_linear(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(1, 0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(2, 0));
  GPUU_RETURN_IF_ERROR(c.expect_min_rank(0, 1));
  GPUU_RETURN_IF_ERROR(c.expect_rank(1, 2));
  const Shape& x = c.x(0).shape;
  const Shape& w = c.x(1).shape;
  if (w[1] != x.back()) {
    return c.fail(c.input_desc(1), " ", shape_to_string(w), " must be [N, K] with K = ", x.back(), " (the last dim of ",
                  c.input_desc(0), " ", shape_to_string(x), ")");
  }
  GPUU_RETURN_IF_ERROR(check_bias(c, w[0]));
  Shape out(x.begin(), x.end() - 1);
  out.push_back(w[0]);
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

// linear_dequant: the weight's quantized form and its scales against x's K.
// A scale covers group_size consecutive k of one output row (0: all of K, one
// scale per row); 4-bit weights hold two values a byte, low nibble first.
Status infer_linear_dequant(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_dtype(1, {DType::kI8}));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(2, 0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(3, 0));
  GPUU_RETURN_IF_ERROR(c.expect_min_rank(0, 1));
  GPUU_RETURN_IF_ERROR(c.expect_rank(1, 2));
  GPUU_RETURN_IF_ERROR(c.expect_rank(2, 2));
  GPUU_ASSIGN_OR_RETURN(int64_t bits, c.int_attr_in("bits", 4, 8));
  if (bits != 4 && bits != 8) return c.fail("attribute 'bits' must be 8 or 4, got ", bits);
  GPUU_ASSIGN_OR_RETURN(int64_t group_size, c.int_attr_in("group_size", 0, kMaxDim));
  const Shape& x = c.x(0).shape;
  const Shape& w = c.x(1).shape;
  const Shape& scales = c.x(2).shape;
  const int64_t k = x.back();
  if (bits == 4 && k % 2 != 0) return c.fail("4-bit weights need an even K (two a byte), got K=", k);
  const int64_t stored = bits == 8 ? k : k / 2;
  if (w[1] != stored) {
    return c.fail(c.input_desc(1), " ", shape_to_string(w), " must be [N, ", stored, "] for ", bits,
                  "-bit weights over K=", k, " (the last dim of ", c.input_desc(0), " ", shape_to_string(x), ")");
  }
  if (group_size != 0 && k % group_size != 0) {
    return c.fail("attribute 'group_size' ", group_size, " does not divide K=", k);
  }
  const int64_t groups = group_size == 0 ? 1 : k / group_size;
  if (scales != Shape{w[0], groups}) {
    return c.fail(c.input_desc(2), " must have shape [", w[0], ", ", groups, "] (one scale per output row and group of ",
                  group_size == 0 ? k : group_size, " along K), got ", shape_to_string(scales));
  }
  if (const Value* bias = c.input(3)) {
    if (bias->shape != Shape{w[0]}) {
      return c.fail(c.input_desc(3), " must have shape [", w[0], "], got ", shape_to_string(bias->shape));
    }
  }
  Shape out(x.begin(), x.end() - 1);
  out.push_back(w[0]);
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

// ---- convolutions and pools of 2 or 3 spatial dims, resize -----------------

// One spatial output size of a convolution or pool window, exactly torch's
// formula (floor division, and with ceil_mode the last window must start inside
// the input or its left padding).
Result<int64_t> window_output(const InferContext& c, const char* dim, int64_t in, int64_t kernel, int64_t stride,
                              int64_t pad, int64_t dilation, bool ceil_mode) {
  int64_t effective = dilation * (kernel - 1) + 1;
  int64_t numer = in + 2 * pad - effective + (ceil_mode ? stride - 1 : 0);
  int64_t out = (numer >= 0 ? numer / stride : -((-numer + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  if (out < 1) {
    return c.fail("the ", dim, " window (effective size ", effective, ") does not fit the padded input ", dim, " (",
                  in + 2 * pad, ")");
  }
  return out;
}

void pool_defaults(AttrMap* attrs) {
  // stride defaults to the kernel, as in torch.
  auto kernel = attrs->find("kernel");
  if (kernel != attrs->end() && !attrs->count("stride")) (*attrs)["stride"] = kernel->second;
}

// x [N, C, spatial...], weight [O, C/groups, k...]: the checks every grouped
// convolution makes (float and integer), for any number of spatial dims.
Status check_conv_weight(InferContext& c, size_t spatial, int64_t groups) {
  const Shape& x = c.x(0).shape;
  const Shape& w = c.x(1).shape;
  int64_t channels = x[1], out_channels = w[0];
  if (channels % groups != 0) {
    return c.fail("input channels (", channels, ") are not divisible by attribute 'groups' (", groups, ")");
  }
  if (out_channels % groups != 0) {
    return c.fail("output channels (", out_channels, ", dim 0 of the weight) are not divisible by attribute 'groups' (",
                  groups, ")");
  }
  if (w[1] != channels / groups) {
    return c.fail(c.input_desc(1), " ", shape_to_string(w), " must have dim 1 = channels / groups = ", channels / groups);
  }
  for (size_t d = 0; d < spatial; ++d) {
    if (w[2 + d] < 1) return c.fail(c.input_desc(1), " ", shape_to_string(w), " has an empty kernel");
  }
  return Status::Ok();
}

// "depth", "height", "width": the name of spatial dim d of 2 or 3.
const char* spatial_dim_name(size_t d, size_t spatial) {
  static const char* const kNames[3] = {"depth", "height", "width"};
  return kNames[3 - spatial + d];
}

// conv2d, conv3d: x [N, C, spatial...], weight [O, C/groups, k...], bias [O].
template <size_t kSpatial>
Status infer_conv(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(1, 0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(2, 0));
  GPUU_RETURN_IF_ERROR(c.expect_rank(0, 2 + kSpatial));
  GPUU_RETURN_IF_ERROR(c.expect_rank(1, 2 + kSpatial));
  GPUU_ASSIGN_OR_RETURN(auto stride, c.ints_attr("stride", kSpatial, 1, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(auto padding, c.ints_attr("padding", kSpatial, 0, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(auto dilation, c.ints_attr("dilation", kSpatial, 1, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(int64_t groups, c.int_attr_in("groups", 1, kMaxDim));
  GPUU_RETURN_IF_ERROR(check_conv_weight(c, kSpatial, groups));
  const Shape& x = c.x(0).shape;
  const Shape& w = c.x(1).shape;
  GPUU_RETURN_IF_ERROR(check_bias(c, w[0]));
  Shape out = {x[0], w[0]};
  for (size_t d = 0; d < kSpatial; ++d) {
    GPUU_ASSIGN_OR_RETURN(int64_t o, window_output(c, spatial_dim_name(d, kSpatial), x[2 + d], w[2 + d], stride[d],
                                                   padding[d], dilation[d], false));
    out.push_back(o);
  }
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

// weight [C_in, C_out/groups, kH, kW] (torch's layout for transposed convs).
Status infer_conv_transpose2d(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(1, 0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(2, 0));
  GPUU_RETURN_IF_ERROR(c.expect_rank(0, 4));
  GPUU_RETURN_IF_ERROR(c.expect_rank(1, 4));
  GPUU_ASSIGN_OR_RETURN(auto stride, c.ints_attr("stride", 2, 1, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(auto padding, c.ints_attr("padding", 2, 0, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(auto output_padding, c.ints_attr("output_padding", 2, 0, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(auto dilation, c.ints_attr("dilation", 2, 1, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(int64_t groups, c.int_attr_in("groups", 1, kMaxDim));
  const Shape& x = c.x(0).shape;
  const Shape& w = c.x(1).shape;
  if (x[1] % groups != 0) {
    return c.fail("input channels (", x[1], ") are not divisible by attribute 'groups' (", groups, ")");
  }
  if (w[0] != x[1]) {
    return c.fail(c.input_desc(1), " ", shape_to_string(w), " must have dim 0 = input channels = ", x[1]);
  }
  if (w[2] < 1 || w[3] < 1) return c.fail(c.input_desc(1), " ", shape_to_string(w), " has an empty kernel");
  int64_t out_channels = w[1] * groups;
  GPUU_RETURN_IF_ERROR(check_bias(c, out_channels));
  Shape out = {x[0], out_channels};
  for (size_t d = 0; d < 2; ++d) {
    // torch: output padding must be smaller than either stride or dilation.
    if (output_padding[d] >= std::max(stride[d], dilation[d])) {
      return c.fail("attribute 'output_padding' entry ", d, " = ", output_padding[d],
                    " must be smaller than the stride (", stride[d], ") or the dilation (", dilation[d], ")");
    }
    int64_t o = (x[2 + d] - 1) * stride[d] - 2 * padding[d] + dilation[d] * (w[2 + d] - 1) + output_padding[d] + 1;
    if (o < 1 || o > kMaxDim) {
      return c.fail("the output ", spatial_dim_name(d, 2), " (", x[2 + d] - 1, " * ", stride[d], " - 2 * ", padding[d],
                    " + ", dilation[d], " * (", w[2 + d], " - 1) + ", output_padding[d], " + 1 = ", o,
                    ") is not positive");
    }
    out.push_back(o);
  }
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

// avg_pool2d/3d, max_pool2d/3d: x [N, C, spatial...]; only max pools dilate.
template <size_t kSpatial>
Status infer_pool(InferContext& c) {
  bool is_max = c.node.op.rfind("max_pool", 0) == 0;
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_rank(0, 2 + kSpatial));
  GPUU_ASSIGN_OR_RETURN(auto kernel, c.ints_attr("kernel", kSpatial, 1, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(auto stride, c.ints_attr("stride", kSpatial, 1, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(auto padding, c.ints_attr("padding", kSpatial, 0, kMaxDim));
  std::vector<int64_t> dilation(kSpatial, 1);
  if (is_max) {
    GPUU_ASSIGN_OR_RETURN(dilation, c.ints_attr("dilation", kSpatial, 1, kMaxDim));
  } else {
    GPUU_RETURN_IF_ERROR(c.int_attr_in("count_include_pad", 0, 1).status());
  }
  GPUU_ASSIGN_OR_RETURN(int64_t ceil_mode, c.int_attr_in("ceil_mode", 0, 1));
  for (size_t d = 0; d < kSpatial; ++d) {
    // torch's limit (for both pools): padding at most half the kernel, so no window is all padding.
    int64_t limit = kernel[d] / 2;
    if (padding[d] > limit) {
      return c.fail("attribute 'padding' entry ", d, " = ", padding[d], " is more than half the kernel (at most ", limit,
                    ")");
    }
  }
  const Shape& x = c.x(0).shape;
  Shape out = {x[0], x[1]};
  for (size_t d = 0; d < kSpatial; ++d) {
    GPUU_ASSIGN_OR_RETURN(int64_t o, window_output(c, spatial_dim_name(d, kSpatial), x[2 + d], kernel[d], stride[d],
                                                   padding[d], dilation[d], ceil_mode != 0));
    out.push_back(o);
  }
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

Status infer_resize(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_rank(0, 4));
  GPUU_ASSIGN_OR_RETURN(auto size, c.ints_attr("size", 2, 1, kMaxDim));
  ResizeMode mode;
  std::string mode_name = c.str("mode");
  if (!parse_resize_mode(mode_name, &mode)) {
    return c.fail("attribute 'mode' must be \"nearest\", \"nearest_exact\" or \"bilinear\", got \"", mode_name, "\"");
  }
  GPUU_ASSIGN_OR_RETURN(int64_t align_corners, c.int_attr_in("align_corners", 0, 1));
  if (align_corners && mode != ResizeMode::kBilinear) {
    return c.fail("attribute 'align_corners' = 1 applies to mode \"bilinear\" only, not \"", mode_name, "\"");
  }
  if (has_attr(c.attrs, "scales")) {
    std::vector<double> scales = attr_floats(c.attrs, "scales");
    if (scales.size() != 2) return c.fail("attribute 'scales' must have 2 entries, got ", scales.size());
    for (size_t i = 0; i < 2; ++i) {
      if (!(scales[i] > 0.0) || !std::isfinite(scales[i])) {
        return c.fail("attribute 'scales' entry ", i, " = ", scales[i], " must be finite and > 0");
      }
    }
  }
  const Shape& x = c.x(0).shape;
  c.emit(c.x(0).dtype, {x[0], x[1], size[0], size[1]});
  return Status::Ok();
}

// x [N, C, H, W] sampled at grid [N, Ho, Wo, 2] ((x, y) in [-1, 1]): [N, C, Ho, Wo].
Status infer_grid_sample(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(1, 0));
  GPUU_RETURN_IF_ERROR(c.expect_rank(0, 4));
  GPUU_RETURN_IF_ERROR(c.expect_rank(1, 4));
  GridSampleMode mode;
  if (!parse_grid_sample_mode(c.str("mode"), &mode)) {
    return c.fail("attribute 'mode' must be ", kGridSampleModeNames, ", got \"", c.str("mode"), "\"");
  }
  GridSamplePadding padding;
  if (!parse_grid_sample_padding(c.str("padding_mode"), &padding)) {
    return c.fail("attribute 'padding_mode' must be ", kGridSamplePaddingNames, ", got \"", c.str("padding_mode"),
                  "\"");
  }
  GPUU_RETURN_IF_ERROR(c.int_attr_in("align_corners", 0, 1).status());
  const Shape& x = c.x(0).shape;
  const Shape& grid = c.x(1).shape;
  if (grid[3] != 2) {
    return c.fail(c.input_desc(1), " ", shape_to_string(grid), " must be [N, Ho, Wo, 2] (an x and a y per point), "
                  "but its last dim is ", grid[3]);
  }
  if (grid[0] != x[0]) {
    return c.fail(c.input_desc(1), " ", shape_to_string(grid), " has batch ", grid[0], " but ", c.input_desc(0), " ",
                  shape_to_string(x), " has batch ", x[0]);
  }
  if (x[2] == 0 || x[3] == 0) {
    return c.fail(c.input_desc(0), " ", shape_to_string(x), " has an empty height or width: nothing to sample");
  }
  c.emit(c.x(0).dtype, {x[0], x[1], grid[1], grid[2]});
  return Status::Ok();
}

// ---- reductions and normalization ---------------------------------------

Status infer_reduce(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_ASSIGN_OR_RETURN(int64_t keepdim, c.int_attr_in("keepdim", 0, 1));
  if (c.ints("axes").empty()) return c.fail("attribute 'axes' must name at least one axis");
  const Shape& x = c.x(0).shape;
  GPUU_ASSIGN_OR_RETURN(std::vector<int64_t> axes, c.axes_attr("axes", x.size()));
  std::vector<bool> reduced(x.size(), false);
  for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!reduced[d]) {
      out.push_back(x[d]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

Status infer_arg_reduce(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_min_rank(0, 1));
  GPUU_ASSIGN_OR_RETURN(int64_t keepdim, c.int_attr_in("keepdim", 0, 1));
  GPUU_ASSIGN_OR_RETURN(int64_t axis, c.axis_attr("axis", c.rank(0)));
  Shape out = c.x(0).shape;
  if (out[static_cast<size_t>(axis)] == 0) {
    return c.fail(c.input_desc(0), " ", shape_to_string(out), " is empty along attribute 'axis' = ", axis,
                  ": there is no index to return");
  }
  if (keepdim) {
    out[static_cast<size_t>(axis)] = 1;
  } else {
    out.erase(out.begin() + axis);
  }
  c.emit(DType::kI64, std::move(out));
  return Status::Ok();
}

// topk: the k largest (or smallest) along an axis, and their indices (i64);
// torch.sort is topk of the whole axis.
Status infer_topk(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_min_rank(0, 1));
  GPUU_ASSIGN_OR_RETURN(int64_t axis, c.axis_attr("axis", c.rank(0)));
  GPUU_RETURN_IF_ERROR(c.int_attr_in("largest", 0, 1).status());
  Shape out = c.x(0).shape;
  GPUU_ASSIGN_OR_RETURN(int64_t k, c.int_attr_in("k", 0, out[static_cast<size_t>(axis)]));  // at most the axis
  out[static_cast<size_t>(axis)] = k;
  c.emit(c.x(0).dtype, out);
  c.emit(DType::kI64, std::move(out));
  return Status::Ok();
}

// cumsum, softmax: along one axis in range, output like the input.
Status infer_along_axis(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_min_rank(0, 1));
  GPUU_RETURN_IF_ERROR(c.axis_attr("axis", c.rank(0)).status());
  c.emit(c.x(0).dtype, c.x(0).shape);
  return Status::Ok();
}

Status infer_layer_norm(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(1, 0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(2, 0));
  const Shape& x = c.x(0).shape;
  GPUU_ASSIGN_OR_RETURN(int64_t nd, c.int_attr_in("normalized_ndim", 1, static_cast<int64_t>(x.size())));
  double eps = c.f64("eps");
  if (!(eps >= 0.0) || !std::isfinite(eps)) return c.fail("attribute 'eps' = ", eps, " must be finite and >= 0");
  Shape normalized(x.end() - nd, x.end());
  for (size_t i = 1; i <= 2; ++i) {
    const Value* v = c.input(i);
    if (v && v->shape != normalized) {
      return c.fail(c.input_desc(i), " must have the normalized shape ", shape_to_string(normalized), ", got ",
                    shape_to_string(v->shape));
    }
  }
  c.emit(c.x(0).dtype, x);
  return Status::Ok();
}

// ---- attention ----------------------------------------------------------------

// q [..., Hq, L, E], k [..., Hkv, S, E], v [..., Hkv, S, Ev], attn_mask
// broadcastable to [..., Hq, L, S]: every problem found is reported at once.
Status infer_sdpa(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  std::vector<std::string> problems;
  auto note = [&](const auto&... parts) { problems.push_back(str_cat(parts...)); };
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (c.x(i).dtype != c.x(0).dtype) {
      note(c.input_desc(i), " has dtype ", dtype_name(c.x(i).dtype), " but q has ", dtype_name(c.x(0).dtype),
           "; q, k and v must match");
    }
  }
  const Shape& q = c.x(0).shape;
  const Shape& k = c.x(1).shape;
  const Shape& v = c.x(2).shape;
  bool ranks_ok = true;
  for (size_t i = 0; i < 3; ++i) {
    if (c.rank(i) < 3) {
      note(c.input_desc(i), " must have rank >= 3 ([..., heads, sequence, head dim]), got shape ",
           shape_to_string(c.x(i).shape));
      ranks_ok = false;
    }
  }
  if (ranks_ok && (k.size() != q.size() || v.size() != q.size())) {
    note("q ", shape_to_string(q), ", k ", shape_to_string(k), " and v ", shape_to_string(v),
         " must have the same rank");
    ranks_ok = false;
  }
  Shape out;
  if (ranks_ok) {
    const size_t r = q.size();
    Shape batch(q.begin(), q.end() - 3);
    if (Shape(k.begin(), k.end() - 3) != batch || Shape(v.begin(), v.end() - 3) != batch) {
      note("the batch dims (all but the last 3) of q ", shape_to_string(q), ", k ", shape_to_string(k), " and v ",
           shape_to_string(v), " must be equal");
    }
    const int64_t hq = q[r - 3], hkv = k[r - 3], len_l = q[r - 2], len_s = k[r - 2], e = q[r - 1];
    if (v[r - 3] != hkv) note("k has ", hkv, " heads but v has ", v[r - 3], "; they must match");
    if (hkv < 1 || hq % hkv != 0) {
      note("q's ", hq, " heads are not a multiple of k's ", hkv, " (grouped-query attention needs Hq % Hkv == 0)");
    }
    if (v[r - 2] != len_s) note("k has ", len_s, " keys (dim -2) but v has ", v[r - 2], "; they must match");
    if (k[r - 1] != e) note("k's head dim ", k[r - 1], " differs from q's ", e, " (dim -1)");
    if (e < 1) note("the head dim of q (dim -1) is 0; it must be >= 1");
    out = batch;
    for (int64_t d : {hq, len_l, v[r - 1]}) out.push_back(d);
  }
  if (const Value* mask = c.input(3)) {
    if (mask->dtype != DType::kBool && mask->dtype != c.x(0).dtype) {
      note(c.input_desc(3), " has dtype ", dtype_name(mask->dtype), "; it must be bool (true: attend) or q's dtype ",
           dtype_name(c.x(0).dtype), " (added to the scores)");
    }
    if (ranks_ok) {
      Shape scores = out;
      scores.back() = k[k.size() - 2];
      bool fits = mask->shape.size() <= scores.size();
      for (size_t i = 0; fits && i < mask->shape.size(); ++i) {
        int64_t m = mask->shape[mask->shape.size() - 1 - i], s = scores[scores.size() - 1 - i];
        fits = m == s || m == 1;
      }
      if (!fits) {
        note(c.input_desc(3), " ", shape_to_string(mask->shape), " does not broadcast to the scores ",
             shape_to_string(scores), " ([..., Hq, L, S])");
      }
    }
  }
  const int64_t causal = c.i64("is_causal");
  if (causal != 0 && causal != 1) note("attribute 'is_causal' = ", causal, " must be 0 or 1");
  if (causal == 1 && c.input(3)) note("attribute 'is_causal' = 1 and an attn_mask are exclusive (as in PyTorch)");
  if (has_attr(c.attrs, "scale") && !std::isfinite(c.f64("scale"))) {
    note("attribute 'scale' = ", c.f64("scale"), " must be finite");
  }
  if (!problems.empty()) {
    std::string all;
    for (size_t i = 0; i < problems.size(); ++i) all += (i ? "; " : "") + problems[i];
    return c.fail(all);
  }
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

// ---- data movement ----------------------------------------------------------

Status infer_transpose(InferContext& c) {
  const Shape& x = c.x(0).shape;
  std::vector<int64_t> perm = c.ints("perm");
  if (perm.size() != x.size()) {
    return c.fail("attribute 'perm' ", ints_to_string(perm), " must have one entry per dim of ", c.input_desc(0), " ",
                  shape_to_string(x));
  }
  Shape out(x.size());
  std::vector<bool> used(x.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p = perm[i];
    if (p < 0 || p >= static_cast<int64_t>(x.size()) || used[static_cast<size_t>(p)]) {
      return c.fail("attribute 'perm' ", ints_to_string(perm), " is not a permutation of 0..", x.size() - 1);
    }
    used[static_cast<size_t>(p)] = true;
    out[i] = x[static_cast<size_t>(p)];
  }
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

Status infer_reshape(InferContext& c) {
  std::vector<int64_t> shape = c.ints("shape");
  if (shape.size() > kMaxRank) return c.fail("attribute 'shape' has more than ", kMaxRank, " dims");
  int64_t known = 1;
  int64_t inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d == -1) {
      if (inferred >= 0) return c.fail("attribute 'shape' ", ints_to_string(shape), " has more than one -1");
      inferred = static_cast<int64_t>(i);
      continue;
    }
    if (d < 0 || d > kMaxDim) return c.fail("attribute 'shape' entry ", i, " = ", d, " is not a valid dim");
    if (d != 0 && known > kMaxNumel / d) return c.fail("attribute 'shape' ", ints_to_string(shape), " is too large");
    known *= d;
  }
  int64_t numel = shape_numel(c.x(0).shape);
  Shape out = shape;
  if (inferred >= 0) {
    if (known == 0 || numel % known != 0) {
      return c.fail("attribute 'shape' ", ints_to_string(shape), " cannot hold the ", numel, " elements of ",
                    c.input_desc(0), " ", shape_to_string(c.x(0).shape));
    }
    out[static_cast<size_t>(inferred)] = numel / known;
  } else if (known != numel) {
    return c.fail("attribute 'shape' ", ints_to_string(shape), " has ", known, " elements, but ", c.input_desc(0), " ",
                  shape_to_string(c.x(0).shape), " has ", numel);
  }
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

Status infer_slice(InferContext& c) {
  const Shape& x = c.x(0).shape;
  std::vector<int64_t> starts = c.ints("starts"), ends = c.ints("ends"), steps = c.ints("steps");
  size_t count = c.ints("axes").size();
  if (starts.size() != count || ends.size() != count || steps.size() != count) {
    return c.fail("attributes 'axes', 'starts', 'ends' and 'steps' must have the same length (got ", count, ", ",
                  starts.size(), ", ", ends.size(), ", ", steps.size(), ")");
  }
  GPUU_ASSIGN_OR_RETURN(std::vector<int64_t> axes, c.axes_attr("axes", x.size()));
  Shape out = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (steps[i] < 1) return c.fail("attribute 'steps' entry ", i, " = ", steps[i], " must be >= 1");
    int64_t dim = x[static_cast<size_t>(a)];
    // Negative indices count from the end; then both clamp into [0, dim].
    auto clamp_index = [dim](int64_t v) {
      if (v < 0) v += dim;
      return std::min(std::max(v, int64_t{0}), dim);
    };
    int64_t start = clamp_index(starts[i]);
    int64_t end = clamp_index(ends[i]);
    out[static_cast<size_t>(a)] = end > start ? (end - start - 1) / steps[i] + 1 : 0;
  }
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

void slice_defaults(AttrMap* attrs) {
  auto axes = attrs->find("axes");
  if (axes == attrs->end() || attrs->count("steps")) return;
  if (const auto* a = std::get_if<std::vector<int64_t>>(&axes->second)) {
    (*attrs)["steps"] = std::vector<int64_t>(a->size(), 1);
  }
}

Status infer_concat(InferContext& c) {
  const Shape& first = c.x(0).shape;
  GPUU_RETURN_IF_ERROR(c.expect_min_rank(0, 1));
  GPUU_ASSIGN_OR_RETURN(int64_t axis, c.axis_attr("axis", first.size()));
  Shape out = first;
  for (size_t i = 1; i < c.in.size(); ++i) {
    GPUU_RETURN_IF_ERROR(c.expect_same_dtype(i, 0));
    const Shape& s = c.x(i).shape;
    bool compatible = s.size() == first.size();
    for (size_t d = 0; compatible && d < s.size(); ++d) {
      if (static_cast<int64_t>(d) != axis && s[d] != first[d]) compatible = false;
    }
    if (!compatible) {
      return c.fail(c.input_desc(i), " ", shape_to_string(s), " does not match ", c.input_desc(0), " ",
                    shape_to_string(first), " outside axis ", axis);
    }
    out[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
    if (out[static_cast<size_t>(axis)] > kMaxDim) return c.fail("the concatenated axis ", axis, " is too long");
  }
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

Status infer_pad(InferContext& c) {
  const Shape& x = c.x(0).shape;
  GPUU_ASSIGN_OR_RETURN(auto pads, c.ints_attr("pads", 2 * x.size(), 0, kMaxDim));
  if (std::isnan(c.f64("value")) && c.x(0).dtype != DType::kF32 && c.x(0).dtype != DType::kF16) {
    return c.fail("attribute 'value' is NaN, which ", dtype_name(c.x(0).dtype), " cannot hold");
  }
  std::string mode = c.str("mode");
  if (mode != "constant" && mode != "reflect" && mode != "replicate" && mode != "circular") {
    return c.fail("attribute 'mode' must be \"constant\", \"reflect\", \"replicate\" or \"circular\", got \"", mode,
                  "\"");
  }
  if (mode != "constant") {
    if (c.f64("value") != 0.0) return c.fail("attribute 'value' applies to mode \"constant\" only, not \"", mode, "\"");
    for (size_t d = 0; d < x.size(); ++d) {
      int64_t most = std::max(pads[2 * d], pads[2 * d + 1]);
      if (most == 0) continue;
      // torch's limits: one reflection (pad < dim), one wrap (pad <= dim), something to repeat.
      int64_t limit = mode == "reflect" ? x[d] - 1 : mode == "circular" ? x[d] : (x[d] > 0 ? kMaxDim : 0);
      if (most > limit) {
        return c.fail("attribute 'pads' pads dim ", d, " (size ", x[d], ") by ", most, ", but mode \"", mode,
                      "\" allows at most ", limit);
      }
    }
  }
  Shape out = x;
  for (size_t d = 0; d < x.size(); ++d) out[d] += pads[2 * d] + pads[2 * d + 1];
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

// torch.expand: numpy broadcasting of x to 'shape' (-1 keeps x's dim).
Status infer_expand(InferContext& c) {
  const Shape& x = c.x(0).shape;
  std::vector<int64_t> shape = c.ints("shape");
  if (shape.size() < x.size()) {
    return c.fail("attribute 'shape' ", ints_to_string(shape), " has fewer dims than ", c.input_desc(0), " ",
                  shape_to_string(x));
  }
  if (shape.size() > kMaxRank) return c.fail("attribute 'shape' has more than ", kMaxRank, " dims");
  size_t lead = shape.size() - x.size();
  Shape out(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t want = shape[i];
    if (i < lead) {
      if (want < 0 || want > kMaxDim) return c.fail("attribute 'shape' entry ", i, " = ", want, " is not a valid new dim");
      out[i] = want;
      continue;
    }
    int64_t have = x[i - lead];
    if (want == -1) want = have;
    if (want < 0 || want > kMaxDim) return c.fail("attribute 'shape' entry ", i, " = ", shape[i], " is not a valid dim");
    if (have != want && have != 1) {
      return c.fail(c.input_desc(0), " ", shape_to_string(x), " cannot expand to ", ints_to_string(shape), ": dim ",
                    i - lead, " is ", have, " (must be 1 or ", want, ")");
    }
    out[i] = want;
  }
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

Status infer_flip(InferContext& c) {
  const Shape& x = c.x(0).shape;
  GPUU_RETURN_IF_ERROR(c.axes_attr("axes", x.size()).status());
  c.emit(c.x(0).dtype, x);
  return Status::Ok();
}

Status infer_gather(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_dtype(1, kIndex));
  GPUU_RETURN_IF_ERROR(c.expect_min_rank(0, 1));
  const Shape& x = c.x(0).shape;
  const Shape& index = c.x(1).shape;
  if (index.size() != x.size()) {
    return c.fail(c.input_desc(1), " ", shape_to_string(index), " must have the rank of ", c.input_desc(0), " ",
                  shape_to_string(x));
  }
  GPUU_ASSIGN_OR_RETURN(int64_t axis, c.axis_attr("axis", x.size()));
  for (size_t d = 0; d < x.size(); ++d) {
    if (static_cast<int64_t>(d) != axis && index[d] > x[d]) {
      return c.fail(c.input_desc(1), " ", shape_to_string(index), " is larger than ", c.input_desc(0), " ",
                    shape_to_string(x), " at dim ", d, " (only axis ", axis, " may differ)");
    }
  }
  c.emit(c.x(0).dtype, index);
  return Status::Ok();
}

Status infer_index_select(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_dtype(1, kIndex));
  GPUU_RETURN_IF_ERROR(c.expect_min_rank(0, 1));
  GPUU_RETURN_IF_ERROR(c.expect_rank(1, 1));
  GPUU_ASSIGN_OR_RETURN(int64_t axis, c.axis_attr("axis", c.rank(0)));
  Shape out = c.x(0).shape;
  out[static_cast<size_t>(axis)] = c.x(1).shape[0];
  c.emit(c.x(0).dtype, std::move(out));
  return Status::Ok();
}

// ---- scatter-style writes (scatter, index_put) ------------------------------

// The reductions scatter and index_put combine an output element with the
// updates that land on it ("none": the update replaces it), torch's
// scatter_reduce names.
constexpr const char* kScatterReduces[] = {"none", "sum", "prod", "mean", "amax", "amin"};

// 'reduce' and 'include_self', and the dtypes a reduction computes in.
Status check_scatter_reduce(const InferContext& c) {
  std::string reduce = c.str("reduce");
  if (std::find_if(std::begin(kScatterReduces), std::end(kScatterReduces),
                   [&](const char* r) { return reduce == r; }) == std::end(kScatterReduces)) {
    return c.fail("attribute 'reduce' must be \"none\", \"sum\", \"prod\", \"mean\", \"amax\" or \"amin\", got \"",
                  reduce, "\"");
  }
  GPUU_ASSIGN_OR_RETURN(int64_t include_self, c.int_attr_in("include_self", 0, 1));
  if (reduce == "none") {
    if (include_self == 0) return c.fail("attribute 'include_self' = 0 applies to a reduction, not reduce \"none\"");
    return Status::Ok();
  }
  return c.expect_dtype(0, kFloatInt);
}

// A constant index must lie in [0, dim): refused here, when the node is made
// (at export), since no backend can report it once the program runs on a GPU.
Status check_constant_index(const InferContext& c, int64_t axis) {
  const Value& index = c.x(1);
  const auto& constants = c.graph.constants();
  if (index.constant < 0 || static_cast<size_t>(index.constant) >= constants.size()) return Status::Ok();
  const Blob& data = constants[static_cast<size_t>(index.constant)].data;
  const size_t esize = dtype_size(index.dtype);
  const int64_t count = shape_numel(index.shape);
  if (data.size() < static_cast<size_t>(count) * esize) return Status::Ok();  // the verifier's to refuse
  const int64_t dim = c.x(0).shape[static_cast<size_t>(axis)];
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = 0;
    if (esize == 8) {
      std::memcpy(&v, data.data() + i * 8, 8);
    } else {
      int32_t v32 = 0;
      std::memcpy(&v32, data.data() + i * 4, 4);
      v = v32;
    }
    if (v >= 0 && v < dim) continue;
    return c.fail(c.input_desc(1), " is a constant holding ", v, " at ", position_string(index.shape, i),
                  ", out of range for axis ", axis, " of ", c.input_desc(0), " ", shape_to_string(c.x(0).shape),
                  " (valid: ", dim ? "0.." + std::to_string(dim - 1) : std::string("none, the axis is empty"), ")");
  }
  return Status::Ok();
}

// scatter (torch.scatter / scatter_add / scatter_reduce): update src[p] lands
// on x at p with p[axis] replaced by index[p].
Status infer_scatter(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_dtype(1, kIndex));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(2, 0));
  GPUU_RETURN_IF_ERROR(c.expect_min_rank(0, 1));
  GPUU_RETURN_IF_ERROR(check_scatter_reduce(c));
  const Shape& x = c.x(0).shape;
  const Shape& index = c.x(1).shape;
  if (index.size() != x.size()) {
    return c.fail(c.input_desc(1), " ", shape_to_string(index), " must have the rank of ", c.input_desc(0), " ",
                  shape_to_string(x));
  }
  if (c.x(2).shape != index) {
    return c.fail(c.input_desc(2), " ", shape_to_string(c.x(2).shape), " must have the shape of ", c.input_desc(1),
                  " ", shape_to_string(index));
  }
  GPUU_ASSIGN_OR_RETURN(int64_t axis, c.axis_attr("axis", x.size()));
  for (size_t d = 0; d < x.size(); ++d) {
    if (static_cast<int64_t>(d) != axis && index[d] > x[d]) {
      return c.fail(c.input_desc(1), " ", shape_to_string(index), " is larger than ", c.input_desc(0), " ",
                    shape_to_string(x), " at dim ", d, " (only axis ", axis, " may differ)");
    }
  }
  GPUU_RETURN_IF_ERROR(check_constant_index(c, axis));
  c.emit(c.x(0).dtype, x);
  return Status::Ok();
}

// index_put (torch.index_copy / index_add / index_reduce; the frontend folds
// index_put's index tensors into one axis): row values[.., j, ..] along the
// axis lands on x's row index[j].
Status infer_index_put(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_dtype(1, kIndex));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(2, 0));
  GPUU_RETURN_IF_ERROR(c.expect_min_rank(0, 1));
  GPUU_RETURN_IF_ERROR(c.expect_rank(1, 1));
  GPUU_RETURN_IF_ERROR(check_scatter_reduce(c));
  GPUU_ASSIGN_OR_RETURN(int64_t axis, c.axis_attr("axis", c.rank(0)));
  Shape rows = c.x(0).shape;
  rows[static_cast<size_t>(axis)] = c.x(1).shape[0];
  if (c.x(2).shape != rows) {
    return c.fail(c.input_desc(2), " ", shape_to_string(c.x(2).shape), " must be ", shape_to_string(rows), ": ",
                  c.input_desc(0), " ", shape_to_string(c.x(0).shape), " with axis ", axis, " the length of ",
                  c.input_desc(1));
  }
  GPUU_RETURN_IF_ERROR(check_constant_index(c, axis));
  c.emit(c.x(0).dtype, c.x(0).shape);
  return Status::Ok();
}

// ---- custom shaders ---------------------------------------------------------

// Parses "<prefix><digits>_<rest>" with a canonical decimal index.
bool indexed_name(std::string_view name, std::string_view prefix, int64_t* index, std::string_view* rest) {
  if (name.substr(0, prefix.size()) != prefix) return false;
  size_t i = prefix.size();
  size_t digits_begin = i;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  size_t digits = i - digits_begin;
  if (digits == 0 || digits > 6 || (digits > 1 && name[digits_begin] == '0')) return false;
  if (i >= name.size() || name[i] != '_') return false;
  int64_t v = 0;
  for (size_t k = digits_begin; k < i; ++k) v = v * 10 + (name[k] - '0');
  *index = v;
  *rest = name.substr(i + 1);
  return true;
}

bool custom_shader_pattern(std::string_view name, AttrKind* kind) {
  int64_t index;
  std::string_view rest;
  if (!indexed_name(name, "output_", &index, &rest)) return false;
  if (rest == "shape") {
    *kind = AttrKind::kInts;
    return true;
  }
  if (rest == "dtype") {
    *kind = AttrKind::kString;
    return true;
  }
  return false;
}

constexpr int64_t kMaxCustomShaderOutputs = 64;

Status check_implementation_attrs(const InferContext& c, int64_t num_outputs) {
  std::string text = c.str("implementation_attrs");
  Result<JsonValue> parsed = parse_json(text);
  if (!parsed.ok()) return c.fail("attribute 'implementation_attrs' is not valid JSON: ", parsed.status().message());
  const JsonValue& doc = parsed.value();
  if (!doc.is_object()) {
    return c.fail("attribute 'implementation_attrs' must be a JSON object, got ", json_kind_name(doc.kind()));
  }
  const JsonValue* entry = doc.find("entry_point");
  if (!entry || !entry->is_string() || entry->as_string().empty()) {
    return c.fail("attribute 'implementation_attrs' needs a non-empty string \"entry_point\"");
  }
  const JsonValue* sizes = doc.find("workgroup_sizes");
  if (!sizes || !sizes->is_array() || sizes->as_array().empty() || sizes->as_array().size() > 3) {
    return c.fail("attribute 'implementation_attrs' needs \"workgroup_sizes\": an array of 1 to 3 positive integers");
  }
  for (size_t i = 0; i < sizes->as_array().size(); ++i) {
    const JsonValue& s = sizes->as_array()[i];
    if (!s.is_integer() || s.as_integer() < 1 || s.as_integer() > kMaxDim) {
      return c.fail("attribute 'implementation_attrs': \"workgroup_sizes\" entry ", i,
                    " must be a positive integer");
    }
  }
  // Per-resource keys must refer to resources the node has.
  for (const auto& member : doc.as_object()) {
    int64_t index;
    std::string_view rest;
    if (indexed_name(member.first, "input_", &index, &rest) && index >= static_cast<int64_t>(c.in.size())) {
      return c.fail("attribute 'implementation_attrs' key \"", member.first, "\" names input ", index,
                    ", but the node has ", c.in.size(), " inputs");
    }
    if (indexed_name(member.first, "output_", &index, &rest) && index >= num_outputs) {
      return c.fail("attribute 'implementation_attrs' key \"", member.first, "\" names output ", index,
                    ", but num_outputs is ", num_outputs);
    }
  }
  return Status::Ok();
}

Status infer_custom_shader(InferContext& c) {
  std::string domain = c.str("domain_name");
  if (domain != kCustomShaderDomain) {
    return c.fail("attribute 'domain_name' must be \"", kCustomShaderDomain, "\", got \"", domain, "\"");
  }
  if (c.str("operator_name").empty()) return c.fail("attribute 'operator_name' must not be empty");
  GPUU_ASSIGN_OR_RETURN(int64_t num_outputs, c.int_attr_in("num_outputs", 1, kMaxCustomShaderOutputs));
  for (const auto& attr : c.attrs) {
    int64_t index;
    std::string_view rest;
    if (indexed_name(attr.first, "output_", &index, &rest) && index >= num_outputs) {
      return c.fail("attribute '", attr.first, "' names output ", index, ", but num_outputs is ", num_outputs);
    }
  }
  GPUU_RETURN_IF_ERROR(check_implementation_attrs(c, num_outputs));
  for (int64_t i = 0; i < num_outputs; ++i) {
    std::string shape_key = "output_" + std::to_string(i) + "_shape";
    std::string dtype_key = "output_" + std::to_string(i) + "_dtype";
    if (!has_attr(c.attrs, shape_key)) return c.fail("attribute '", shape_key, "' (ints) is required but missing");
    if (!has_attr(c.attrs, dtype_key)) return c.fail("attribute '", dtype_key, "' (string) is required but missing");
    Shape shape = attr_ints(c.attrs, shape_key);
    std::string why = shape_problem(shape);
    if (!why.empty()) return c.fail("attribute '", shape_key, "' ", shape_to_string(shape), " is not a valid shape: ", why);
    std::string dtype_text = attr_string(c.attrs, dtype_key);
    DType dtype;
    if (!parse_dtype(dtype_text, &dtype)) {
      return c.fail("attribute '", dtype_key, "' = \"", dtype_text, "\" is not a dtype (f32, f16, i32, i64, i8, bool)");
    }
    c.emit(dtype, std::move(shape));
  }
  return Status::Ok();
}

// ---- integer ops of TOSA's INT profile ----------------------------------------
// Quantized arithmetic with explicit zero points, int32 accumulators and
// fixed-point requantisation (rescale), as TOSA 1.0 defines it.

// An int attribute holding a zero point of an i8 tensor (signed: -128..127,
// unsigned: 0..255), or 0 for i32.
Status check_zero_point(const InferContext& c, const char* name, DType dtype, bool is_unsigned) {
  int64_t zp = c.i64(name);
  if (dtype != DType::kI8) {
    if (zp != 0) return c.fail("attribute '", name, "' = ", zp, " must be 0 for an ", dtype_name(dtype), " tensor");
    return Status::Ok();
  }
  int64_t lo = is_unsigned ? 0 : -128, hi = is_unsigned ? 255 : 127;
  if (zp < lo || zp > hi) {
    return c.fail("attribute '", name, "' = ", zp, " is out of range [", lo, ", ", hi, "] for ",
                  is_unsigned ? "unsigned " : "", "i8");
  }
  return Status::Ok();
}

// Input i: an i32 rank-1 graph constant; its values.
Result<std::vector<int64_t>> constant_i32_values(const InferContext& c, size_t i) {
  const Value& v = c.x(i);
  if (v.dtype != DType::kI32 || v.shape.size() != 1) {
    return c.fail(c.input_desc(i), " must be a rank-1 i32 tensor, got ", dtype_name(v.dtype), shape_to_string(v.shape));
  }
  if (v.constant < 0 || static_cast<size_t>(v.constant) >= c.graph.constants().size()) {
    return c.fail(c.input_desc(i), " must be a graph constant (its values are checked here)");
  }
  const Blob& data = c.graph.constants()[static_cast<size_t>(v.constant)].data;
  if (data.size() != static_cast<size_t>(v.shape[0]) * 4) {
    return c.fail(c.input_desc(i), " holds ", data.size(), " bytes, not ", v.shape[0] * 4);
  }
  std::vector<int64_t> out(static_cast<size_t>(v.shape[0]));
  for (size_t k = 0; k < out.size(); ++k) {
    int32_t e;
    std::memcpy(&e, data.data() + 4 * k, 4);
    out[k] = e;
  }
  return out;
}

Status infer_rescale(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  std::string out_name = c.str("dtype");
  DType to;
  if (!parse_dtype(out_name, &to) || (to != DType::kI8 && to != DType::kI16 && to != DType::kI32)) {
    return c.fail("attribute 'dtype' = \"", out_name, "\" must be \"i8\", \"i16\" or \"i32\"");
  }
  GPUU_ASSIGN_OR_RETURN(int64_t scale32, c.int_attr_in("scale32", 0, 1));
  std::string rounding = c.str("rounding");
  if (rounding != "single_round" && rounding != "double_round" && rounding != "inexact_round") {
    return c.fail("attribute 'rounding' must be \"single_round\", \"double_round\" or \"inexact_round\", got \"",
                  rounding, "\"");
  }
  if (rounding == "double_round" && !scale32) {
    return c.fail("attribute 'rounding' = \"double_round\" needs attribute 'scale32' = 1");
  }
  GPUU_ASSIGN_OR_RETURN(int64_t in_unsigned, c.int_attr_in("input_unsigned", 0, 1));
  GPUU_ASSIGN_OR_RETURN(int64_t out_unsigned, c.int_attr_in("output_unsigned", 0, 1));
  DType from = c.x(0).dtype;
  if (in_unsigned && from != DType::kI8) return c.fail("attribute 'input_unsigned' = 1 needs an i8 input, got ", dtype_name(from));
  if (out_unsigned && to != DType::kI8) return c.fail("attribute 'output_unsigned' = 1 needs dtype i8, got ", dtype_name(to));
  if (in_unsigned && out_unsigned) return c.fail("attributes 'input_unsigned' and 'output_unsigned' cannot both be 1");
  // An i64 input is an i16 GEMM's accumulator (TOSA's i48), whose rescale
  // TOSA allows only a 16-bit multiplier.
  if (from == DType::kI64 && scale32) return c.fail("an i64 (TOSA i48) input needs attribute 'scale32' = 0");
  GPUU_RETURN_IF_ERROR(check_zero_point(c, "input_zp", from, in_unsigned != 0));
  GPUU_RETURN_IF_ERROR(check_zero_point(c, "output_zp", to, out_unsigned != 0));
  GPUU_ASSIGN_OR_RETURN(std::vector<int64_t> multiplier, constant_i32_values(c, 1));
  GPUU_ASSIGN_OR_RETURN(std::vector<int64_t> shift, constant_i32_values(c, 2));
  if (multiplier.size() != shift.size()) {
    return c.fail(c.input_desc(1), " has ", multiplier.size(), " entries but ", c.input_desc(2), " has ", shift.size());
  }
  if (multiplier.size() != 1) {
    if (c.rank(0) == 0) return c.fail("per-channel scales need an input of rank >= 1");
    GPUU_ASSIGN_OR_RETURN(int64_t axis, c.axis_attr("axis", c.rank(0)));
    int64_t channels = c.x(0).shape[static_cast<size_t>(axis)];
    if (static_cast<int64_t>(multiplier.size()) != channels) {
      return c.fail(c.input_desc(1), " has ", multiplier.size(), " entries: per-channel scales need one per channel of "
                    "attribute 'axis' (", channels, ") or a single one");
    }
  }
  int64_t max_multiplier = scale32 ? 2147483647 : 32767;
  for (size_t k = 0; k < multiplier.size(); ++k) {
    if (multiplier[k] < 0 || multiplier[k] > max_multiplier) {
      return c.fail(c.input_desc(1), " entry ", k, " = ", multiplier[k], " is out of range [0, ", max_multiplier,
                    "] (scale32 = ", scale32, ")");
    }
    if (shift[k] < 0 || shift[k] > 63) {
      return c.fail(c.input_desc(2), " entry ", k, " = ", shift[k], " is out of range [0, 63]");
    }
  }
  c.emit(to, c.x(0).shape);
  return Status::Ok();
}

// One output size of a window with separate leading/trailing pads (floor division).
Result<int64_t> window_output_pads(const InferContext& c, const char* dim, int64_t in, int64_t kernel, int64_t stride,
                                   int64_t pad_a, int64_t pad_b, int64_t dilation) {
  int64_t effective = dilation * (kernel - 1) + 1;
  int64_t numer = in + pad_a + pad_b - effective;
  if (numer < 0) {
    return c.fail("the ", dim, " window (effective size ", effective, ") does not fit the padded input ", dim, " (",
                  in + pad_a + pad_b, ")");
  }
  return numer / stride + 1;
}

// i8 x i8 sums in i32; i16 x i8 (16-bit activations) in i64, TOSA's i48
// accumulator, whose bias is i48 too.
Status infer_conv2d_int(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_dtype(1, {DType::kI8}));
  const DType acc = c.x(0).dtype == DType::kI16 ? DType::kI64 : DType::kI32;
  GPUU_RETURN_IF_ERROR(c.expect_dtype(2, {acc}));
  GPUU_RETURN_IF_ERROR(c.expect_rank(0, 4));
  GPUU_RETURN_IF_ERROR(c.expect_rank(1, 4));
  GPUU_ASSIGN_OR_RETURN(auto stride, c.ints_attr("stride", 2, 1, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(auto padding, c.ints_attr("padding", 4, 0, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(auto dilation, c.ints_attr("dilation", 2, 1, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(int64_t groups, c.int_attr_in("groups", 1, kMaxDim));
  GPUU_RETURN_IF_ERROR(check_zero_point(c, "input_zp", c.x(0).dtype, false));
  GPUU_RETURN_IF_ERROR(check_zero_point(c, "weight_zp", DType::kI8, false));
  GPUU_RETURN_IF_ERROR(check_conv_weight(c, 2, groups));
  const Shape& x = c.x(0).shape;
  const Shape& w = c.x(1).shape;
  GPUU_RETURN_IF_ERROR(check_bias(c, w[0]));
  GPUU_ASSIGN_OR_RETURN(int64_t oh, window_output_pads(c, "height", x[2], w[2], stride[0], padding[0], padding[1], dilation[0]));
  GPUU_ASSIGN_OR_RETURN(int64_t ow, window_output_pads(c, "width", x[3], w[3], stride[1], padding[2], padding[3], dilation[1]));
  c.emit(acc, {x[0], w[0], oh, ow});
  return Status::Ok();
}

Status infer_matmul_int(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(1, 0));
  GPUU_RETURN_IF_ERROR(c.expect_rank(0, 3));
  GPUU_RETURN_IF_ERROR(c.expect_rank(1, 3));
  GPUU_RETURN_IF_ERROR(check_zero_point(c, "a_zp", DType::kI8, false));
  GPUU_RETURN_IF_ERROR(check_zero_point(c, "b_zp", DType::kI8, false));
  const Shape& a = c.x(0).shape;
  const Shape& b = c.x(1).shape;
  if (a[0] != b[0]) {
    return c.fail("batch dims differ: ", c.input_desc(0), " ", shape_to_string(a), " and ", c.input_desc(1), " ",
                  shape_to_string(b));
  }
  if (a[2] != b[1]) {
    return c.fail("inner dims differ: ", c.input_desc(0), " ", shape_to_string(a), " has K=", a[2], ", ",
                  c.input_desc(1), " ", shape_to_string(b), " has K=", b[1]);
  }
  c.emit(DType::kI32, {a[0], a[1], b[2]});
  return Status::Ok();
}

Status infer_avg_pool2d_int(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_rank(0, 4));
  GPUU_ASSIGN_OR_RETURN(auto kernel, c.ints_attr("kernel", 2, 1, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(auto stride, c.ints_attr("stride", 2, 1, kMaxDim));
  GPUU_ASSIGN_OR_RETURN(auto padding, c.ints_attr("padding", 4, 0, kMaxDim));
  GPUU_RETURN_IF_ERROR(check_zero_point(c, "input_zp", DType::kI8, false));
  GPUU_RETURN_IF_ERROR(check_zero_point(c, "output_zp", DType::kI8, false));
  for (size_t i = 0; i < 4; ++i) {
    // TOSA's rule: a pad as large as the kernel would leave windows of padding only.
    if (padding[i] >= kernel[i / 2]) {
      return c.fail("attribute 'padding' entry ", i, " = ", padding[i], " must be smaller than the kernel (",
                    kernel[i / 2], ")");
    }
  }
  // 2^23 windows of |x - zp| <= 255 keep the int32 sum from overflowing.
  if (kernel[0] * kernel[1] > (int64_t{1} << 23)) {
    return c.fail("attribute 'kernel' ", shape_to_string(kernel), " covers more than 2^23 elements (the int32 sum could overflow)");
  }
  const Shape& x = c.x(0).shape;
  GPUU_ASSIGN_OR_RETURN(int64_t oh, window_output_pads(c, "height", x[2], kernel[0], stride[0], padding[0], padding[1], 1));
  GPUU_ASSIGN_OR_RETURN(int64_t ow, window_output_pads(c, "width", x[3], kernel[1], stride[1], padding[2], padding[3], 1));
  c.emit(DType::kI8, {x[0], x[1], oh, ow});
  return Status::Ok();
}

// arithmetic_right_shift, mul_shift: i32 a and b, broadcast.
Status infer_int_shift(InferContext& c) {
  if (c.node.op == "mul_shift") GPUU_RETURN_IF_ERROR(c.int_attr_in("shift", 0, 63).status());
  if (c.node.op == "arithmetic_right_shift") GPUU_RETURN_IF_ERROR(c.int_attr_in("round", 0, 1).status());
  return infer_binary(c);
}

Status infer_table(InferContext& c) {
  GPUU_RETURN_IF_ERROR(c.expect_schema_dtype(0));
  GPUU_RETURN_IF_ERROR(c.expect_same_dtype(1, 0));
  if (c.x(1).shape != Shape{256}) {
    return c.fail(c.input_desc(1), " must have shape [256] (one entry per i8 value), got ", shape_to_string(c.x(1).shape));
  }
  c.emit(DType::kI8, c.x(0).shape);
  return Status::Ok();
}

// ---- the table ---------------------------------------------------------------

AttrSpec required(const char* name, AttrKind kind) {
  AttrSpec a;
  a.name = name;
  a.kind = kind;
  a.required = true;
  return a;
}

AttrSpec optional(const char* name, AttrKind kind) {
  AttrSpec a;
  a.name = name;
  a.kind = kind;
  return a;
}

AttrSpec with_default(const char* name, AttrValue value) {
  AttrSpec a;
  a.name = name;
  a.kind = attr_kind_of(value);
  a.has_default = true;
  a.default_value = std::move(value);
  return a;
}

AttrSpec derived(const char* name, AttrKind kind, const char* from) {
  AttrSpec a = optional(name, kind);
  a.derived_from = from;
  return a;
}

OpSchema op(const char* name, std::vector<InputSpec> inputs, size_t min_inputs, size_t max_inputs,
            std::vector<AttrSpec> attrs, std::vector<DType> dtypes, const char* dtype_rule, InferFn fn) {
  OpSchema s;
  s.name = name;
  s.inputs = std::move(inputs);
  s.min_inputs = min_inputs;
  s.max_inputs = max_inputs;
  s.attrs = std::move(attrs);
  s.dtypes = std::move(dtypes);
  s.dtype_rule = dtype_rule;
  s.infer_fn = fn;
  return s;
}

using Ints = std::vector<int64_t>;

std::vector<OpSchema> build_registry() {
  std::vector<OpSchema> ops;
  const InputSpec x{"x", false};
  for (const char* name : {"exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tanh", "sigmoid", "erf", "floor",
                           "ceil"}) {
    ops.push_back(op(name, {x}, 1, 1, {}, kFloat, "f32 or f16; output has the input's dtype and shape", infer_unary));
  }
  for (const char* name : {"tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "expm1", "log1p",
                           "round", "trunc"}) {
    ops.push_back(op(name, {x}, 1, 1, {}, kFloat, "f32 or f16; output has the input's dtype and shape", infer_unary));
  }
  for (const char* name : {"abs", "neg"}) {
    ops.push_back(op(name, {x}, 1, 1, {}, kNumeric, "f32, f16, i32, i64 or i8; output has the input's dtype and shape",
                     infer_unary));
  }
  ops.push_back(op("relu", {x}, 1, 1, {}, kFloatI32I8, "f32, f16, i32 or i8; output has the input's dtype and shape",
                   infer_unary));
  ops.push_back(op("sign", {x}, 1, 1, {}, kFloatInt, "f32, f16, i32 or i64; output has the input's dtype and shape",
                   infer_unary));
  for (const char* name : {"isnan", "isinf"}) {
    ops.push_back(op(name, {x}, 1, 1, {}, kFloat, "f32 or f16; output bool of the input's shape", infer_predicate));
  }
  ops.push_back(op("logical_not", {x}, 1, 1, {}, kAny, "any dtype; output bool (x == 0)", infer_predicate));
  ops.push_back(op("bitwise_not", {x}, 1, 1, {}, kBits, "i32, i64 or bool; output has the input's dtype and shape",
                   infer_unary));
  ops.push_back(op("gelu", {x}, 1, 1, {with_default("approximate", std::string("none"))}, kFloat,
                   "f32 or f16; output has the input's dtype and shape", infer_unary));

  const std::vector<InputSpec> ab = {{"a", false}, {"b", false}};
  for (const char* name : {"add", "sub", "mul", "maximum", "minimum"}) {
    ops.push_back(op(name, ab, 2, 2, {}, kNumeric, "a and b of one dtype (f32, f16, i32, i64, i8); shapes broadcast",
                     infer_binary));
  }
  ops.push_back(op("atan2", ab, 2, 2, {}, kFloat, "a and b of one dtype (f32 or f16); shapes broadcast", infer_binary));
  for (const char* name : {"remainder", "fmod", "floor_divide"}) {
    ops.push_back(op(name, ab, 2, 2, {}, kFloatInt, "a and b of one dtype (f32, f16, i32, i64); shapes broadcast",
                     infer_binary));
  }
  for (const char* name : {"logical_and", "logical_or", "logical_xor"}) {
    ops.push_back(op(name, ab, 2, 2, {}, kAny, "a and b of one dtype (any; nonzero is true); shapes broadcast; output bool",
                     infer_compare));
  }
  for (const char* name : {"bitwise_and", "bitwise_or", "bitwise_xor"}) {
    ops.push_back(op(name, ab, 2, 2, {}, kBits, "a and b of one dtype (i32, i64, bool); shapes broadcast", infer_binary));
  }
  for (const char* name : {"div", "pow", "logaddexp"}) {
    ops.push_back(op(name, ab, 2, 2, {}, kFloat, "a and b of one dtype (f32 or f16); shapes broadcast", infer_binary));
  }
  for (const char* name : {"equal", "not_equal"}) {
    ops.push_back(op(name, ab, 2, 2, {}, kAny, "a and b of one dtype (any); shapes broadcast; output bool",
                     infer_compare));
  }
  for (const char* name : {"less", "less_equal", "greater", "greater_equal"}) {
    ops.push_back(op(name, ab, 2, 2, {}, kNumeric, "a and b of one numeric dtype; shapes broadcast; output bool",
                     infer_compare));
  }
  ops.push_back(op("clamp", {x}, 1, 1, {optional("min", AttrKind::kFloat), optional("max", AttrKind::kFloat)},
                   {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kI8, DType::kI16},
                   "numeric (i16 too: a 16-bit quantized activation's bounds); output has the input's dtype and "
                   "shape", infer_clamp));
  ops.push_back(op("where", {{"cond", false}, {"a", false}, {"b", false}}, 3, 3, {}, kAny,
                   "cond bool; a and b of one dtype; all three broadcast", infer_where));
  ops.push_back(op("cast", {x}, 1, 1, {required("dtype", AttrKind::kString)}, kAny,
                   "any dtype to attribute 'dtype'", infer_cast));

  ops.push_back(op("matmul", ab, 2, 2, {}, kFloat, "f32 or f16, both alike; [...,M,K] x [...,K,N], batch dims broadcast",
                   infer_matmul));
  ops.push_back(op("linear", {x, {"weight", false}, {"bias", true}}, 2, 3, {}, kFloat,
                   "f32 or f16, all alike; x [...,K], weight [N,K], bias [N]", infer_linear));
  ops.push_back(op("linear_dequant", {x, {"weight", false}, {"scales", false}, {"bias", true}}, 3, 4,
                   {with_default("bits", int64_t{8}), with_default("group_size", int64_t{0})}, kFloat,
                   "x f32 or f16 [...,K]; weight i8 [N,K] (bits 8) or [N,K/2] (bits 4: two signed nibbles a byte, "
                   "low first); scales and bias x's dtype, [N, K/group_size] (group_size 0: [N,1]) and [N]; "
                   "x dequantize(weight)^T + bias, weight[n,k] times its group's scale",
                   infer_linear_dequant));
  ops.push_back(op("conv2d", {x, {"weight", false}, {"bias", true}}, 2, 3,
                   {with_default("stride", Ints{1, 1}), with_default("padding", Ints{0, 0}),
                    with_default("dilation", Ints{1, 1}), with_default("groups", int64_t{1})},
                   kFloat, "f32 or f16, all alike; x NCHW, weight [O, C/groups, kH, kW], bias [O]", infer_conv<2>));

  OpSchema avg = op("avg_pool2d", {x}, 1, 1,
                    {required("kernel", AttrKind::kInts), derived("stride", AttrKind::kInts, "kernel"),
                     with_default("padding", Ints{0, 0}), with_default("ceil_mode", int64_t{0}),
                     with_default("count_include_pad", int64_t{1})},
                    kFloat, "f32 or f16; x NCHW", infer_pool<2>);
  avg.derived_defaults = pool_defaults;
  ops.push_back(std::move(avg));
  OpSchema max = op("max_pool2d", {x}, 1, 1,
                    {required("kernel", AttrKind::kInts), derived("stride", AttrKind::kInts, "kernel"),
                     with_default("padding", Ints{0, 0}), with_default("dilation", Ints{1, 1}),
                     with_default("ceil_mode", int64_t{0})},
                    kFloatI32I16I8, "f32, f16, i32, i16 or i8; x NCHW", infer_pool<2>);
  max.derived_defaults = pool_defaults;
  ops.push_back(std::move(max));

  ops.push_back(op("conv3d", {x, {"weight", false}, {"bias", true}}, 2, 3,
                   {with_default("stride", Ints{1, 1, 1}), with_default("padding", Ints{0, 0, 0}),
                    with_default("dilation", Ints{1, 1, 1}), with_default("groups", int64_t{1})},
                   kFloat, "f32 or f16, all alike; x NCDHW, weight [O, C/groups, kD, kH, kW], bias [O]", infer_conv<3>));
  ops.push_back(op("conv_transpose2d", {x, {"weight", false}, {"bias", true}}, 2, 3,
                   {with_default("stride", Ints{1, 1}), with_default("padding", Ints{0, 0}),
                    with_default("output_padding", Ints{0, 0}), with_default("dilation", Ints{1, 1}),
                    with_default("groups", int64_t{1})},
                   kFloat, "f32 or f16, all alike; x NCHW, weight [C, O/groups, kH, kW], bias [O]",
                   infer_conv_transpose2d));
  OpSchema avg3 = op("avg_pool3d", {x}, 1, 1,
                     {required("kernel", AttrKind::kInts), derived("stride", AttrKind::kInts, "kernel"),
                      with_default("padding", Ints{0, 0, 0}), with_default("ceil_mode", int64_t{0}),
                      with_default("count_include_pad", int64_t{1})},
                     kFloat, "f32 or f16; x NCDHW", infer_pool<3>);
  avg3.derived_defaults = pool_defaults;
  ops.push_back(std::move(avg3));
  OpSchema max3 = op("max_pool3d", {x}, 1, 1,
                     {required("kernel", AttrKind::kInts), derived("stride", AttrKind::kInts, "kernel"),
                      with_default("padding", Ints{0, 0, 0}), with_default("dilation", Ints{1, 1, 1}),
                      with_default("ceil_mode", int64_t{0})},
                     kFloatI32I8, "f32, f16, i32 or i8; x NCDHW", infer_pool<3>);
  max3.derived_defaults = pool_defaults;
  ops.push_back(std::move(max3));
  ops.push_back(op("resize", {x}, 1, 1,
                   {required("size", AttrKind::kInts), with_default("mode", std::string("nearest")),
                    with_default("align_corners", int64_t{0}), optional("scales", AttrKind::kFloats)},
                   kFloat, "f32 or f16; x NCHW", infer_resize));
  ops.push_back(op("grid_sample", {x, {"grid", false}}, 2, 2,
                   {with_default("mode", std::string("bilinear")), with_default("padding_mode", std::string("zeros")),
                    with_default("align_corners", int64_t{0})},
                   kFloat, "x and grid f32 or f16, alike; x NCHW, grid [N, Ho, Wo, 2]; output [N, C, Ho, Wo]",
                   infer_grid_sample));

  const std::vector<AttrSpec> reduce_attrs = {required("axes", AttrKind::kInts), with_default("keepdim", int64_t{0})};
  ops.push_back(op("reduce_sum", {x}, 1, 1, reduce_attrs, {DType::kF32, DType::kF16, DType::kI32, DType::kI64},
                   "f32, f16, i32 or i64; output keeps the dtype", infer_reduce));
  ops.push_back(op("reduce_mean", {x}, 1, 1, reduce_attrs, kFloat, "f32 or f16", infer_reduce));
  ops.push_back(op("reduce_max", {x}, 1, 1, reduce_attrs, kNumeric, "numeric; output keeps the dtype", infer_reduce));
  ops.push_back(op("reduce_min", {x}, 1, 1, reduce_attrs, kNumeric, "numeric; output keeps the dtype", infer_reduce));
  ops.push_back(op("reduce_prod", {x}, 1, 1, reduce_attrs, kNumeric, "numeric; output keeps the dtype", infer_reduce));
  for (const char* name : {"reduce_any", "reduce_all"}) {
    ops.push_back(op(name, {x}, 1, 1, reduce_attrs, {DType::kBool}, "bool; output bool", infer_reduce));
  }
  for (const char* name : {"argmax", "argmin"}) {
    ops.push_back(op(name, {x}, 1, 1, {required("axis", AttrKind::kInt), with_default("keepdim", int64_t{0})},
                     kFloatInt, "f32, f16, i32 or i64; output i64 (first index of the extreme value)",
                     infer_arg_reduce));
  }
  ops.push_back(op("topk", {x}, 1, 1,
                   {required("k", AttrKind::kInt), required("axis", AttrKind::kInt), with_default("largest", int64_t{1})},
                   kFloatInt,
                   "f32, f16, i32 or i64; values keep the dtype, indices i64; sorted, ties in index order",
                   infer_topk));
  ops.push_back(op("cumsum", {x}, 1, 1, {required("axis", AttrKind::kInt)}, kFloatInt,
                   "f32, f16, i32 or i64; output has the input's dtype and shape", infer_along_axis));
  ops.push_back(op("softmax", {x}, 1, 1, {required("axis", AttrKind::kInt)}, kFloat, "f32 or f16", infer_along_axis));
  ops.push_back(op("layer_norm", {x, {"weight", true}, {"bias", true}}, 1, 3,
                   {required("normalized_ndim", AttrKind::kInt), with_default("eps", 1e-5)}, kFloat,
                   "f32 or f16, all alike; weight and bias have the normalized (trailing) shape", infer_layer_norm));

  ops.push_back(op("scaled_dot_product_attention",
                   {{"q", false}, {"k", false}, {"v", false}, {"attn_mask", true}}, 3, 4,
                   {with_default("is_causal", int64_t{0}), optional("scale", AttrKind::kFloat)}, kFloat,
                   "q, k, v f32 or f16, all alike; attn_mask bool (true: attend) or q's dtype (added); output q's "
                   "dtype, [..., Hq, L, Ev]",
                   infer_sdpa));

  ops.push_back(op("transpose", {x}, 1, 1, {required("perm", AttrKind::kInts)}, kAny, "any dtype", infer_transpose));
  ops.push_back(op("reshape", {x}, 1, 1, {required("shape", AttrKind::kInts)}, kAny, "any dtype", infer_reshape));
  OpSchema slice = op("slice", {x}, 1, 1,
                      {required("axes", AttrKind::kInts), required("starts", AttrKind::kInts),
                       required("ends", AttrKind::kInts), derived("steps", AttrKind::kInts, "axes (all 1)")},
                      kAny, "any dtype", infer_slice);
  slice.derived_defaults = slice_defaults;
  ops.push_back(std::move(slice));
  ops.push_back(op("concat", {{"x", false}}, 1, kVariadic, {with_default("axis", int64_t{0})}, kAny,
                   "any dtype, all inputs alike", infer_concat));
  ops.push_back(op("pad", {x}, 1, 1,
                   {required("pads", AttrKind::kInts), with_default("value", 0.0),
                    with_default("mode", std::string("constant"))},
                   kAny, "any dtype", infer_pad));
  ops.push_back(op("expand", {x}, 1, 1, {required("shape", AttrKind::kInts)}, kAny, "any dtype", infer_expand));
  ops.push_back(op("flip", {x}, 1, 1, {required("axes", AttrKind::kInts)}, kAny, "any dtype", infer_flip));
  ops.push_back(op("gather", {x, {"index", false}}, 2, 2, {required("axis", AttrKind::kInt)}, kAny,
                   "x any dtype; index i32 or i64 of x's rank; output has x's dtype and index's shape", infer_gather));
  ops.push_back(op("index_select", {x, {"index", false}}, 2, 2, {required("axis", AttrKind::kInt)}, kAny,
                   "x any dtype; index 1-D i32 or i64", infer_index_select));
  // Scatter-style writes: one op per indexing form, each with the reduction as an attribute.
  const std::vector<AttrSpec> scatter_attrs = {required("axis", AttrKind::kInt),
                                               with_default("reduce", std::string("none")),
                                               with_default("include_self", int64_t{1})};
  ops.push_back(op("scatter", {x, {"index", false}, {"src", false}}, 3, 3, scatter_attrs, kAny,
                   "x any dtype (a reduction: f32, f16, i32 or i64); index i32 or i64 of x's rank; src x's dtype and "
                   "index's shape; output x's dtype and shape",
                   infer_scatter));
  ops.push_back(op("index_put", {x, {"index", false}, {"values", false}}, 3, 3, scatter_attrs, kAny,
                   "x any dtype (a reduction: f32, f16, i32 or i64); index 1-D i32 or i64; values x's dtype and shape "
                   "with the axis the index's length; output x's dtype and shape",
                   infer_index_put));

  OpSchema shader = op("custom_shader", {{"input", false}}, 0, kVariadic,
                       {required("domain_name", AttrKind::kString), required("operator_name", AttrKind::kString),
                        required("implementation_attrs", AttrKind::kString), required("num_outputs", AttrKind::kInt)},
                       kAny, "any dtypes; outputs from attributes output_<i>_shape and output_<i>_dtype",
                       infer_custom_shader);
  shader.pattern_attr = custom_shader_pattern;
  ops.push_back(std::move(shader));

  const std::vector<DType> kI8Only = {DType::kI8};
  ops.push_back(op("rescale", {x, {"multiplier", false}, {"shift", false}}, 3, 3,
                   {required("dtype", AttrKind::kString), with_default("scale32", int64_t{1}),
                    with_default("rounding", std::string("single_round")), with_default("axis", int64_t{-1}),
                    with_default("input_zp", int64_t{0}), with_default("output_zp", int64_t{0}),
                    with_default("input_unsigned", int64_t{0}), with_default("output_unsigned", int64_t{0})},
                   {DType::kI8, DType::kI16, DType::kI32, DType::kI64},
                   "x i8, i16, i32 or i64 (an i16 conv2d_int's accumulator, TOSA's i48: scale32 = 0); multiplier "
                   "and shift i32 constants [1] or [channels of 'axis']; output i8, i16 or i32 (attribute 'dtype')",
                   infer_rescale));
  ops.push_back(op("conv2d_int", {x, {"weight", false}, {"bias", true}}, 2, 3,
                   {with_default("stride", Ints{1, 1}), with_default("padding", Ints{0, 0, 0, 0}),
                    with_default("dilation", Ints{1, 1}), with_default("groups", int64_t{1}),
                    with_default("input_zp", int64_t{0}), with_default("weight_zp", int64_t{0})},
                   {DType::kI8, DType::kI16},
                   "x i8 or i16, weight i8; bias and output i32 (x i8) or i64 (x i16: TOSA's i48 accumulator); x "
                   "NCHW, weight [O, C/groups, kH, kW]",
                   infer_conv2d_int));
  ops.push_back(op("matmul_int", ab, 2, 2, {with_default("a_zp", int64_t{0}), with_default("b_zp", int64_t{0})},
                   kI8Only, "a and b i8; [B,M,K] x [B,K,N]; output i32", infer_matmul_int));
  OpSchema avg_int = op("avg_pool2d_int", {x}, 1, 1,
                        {required("kernel", AttrKind::kInts), derived("stride", AttrKind::kInts, "kernel"),
                         with_default("padding", Ints{0, 0, 0, 0}), with_default("input_zp", int64_t{0}),
                         with_default("output_zp", int64_t{0})},
                        kI8Only, "i8; x NCHW; output i8", infer_avg_pool2d_int);
  avg_int.derived_defaults = pool_defaults;
  ops.push_back(std::move(avg_int));
  ops.push_back(op("mul_shift", ab, 2, 2, {with_default("shift", int64_t{0})}, {DType::kI32},
                   "a and b i32; shapes broadcast; (a * b + 2^(shift-1)) >> shift in 64 bits, wrapped to i32",
                   infer_int_shift));
  ops.push_back(op("arithmetic_right_shift", ab, 2, 2, {with_default("round", int64_t{0})}, {DType::kI32},
                   "a and b i32; shapes broadcast; b clamped to [0, 31]", infer_int_shift));
  ops.push_back(op("table", {x, {"table", false}}, 2, 2, {}, kI8Only, "x i8, table i8 [256]; output i8",
                   infer_table));

  std::sort(ops.begin(), ops.end(), [](const OpSchema& a, const OpSchema& b) { return a.name < b.name; });
  return ops;
}

template <typename... Parts>
Status node_error(const Node& node, const Parts&... parts) {
  return err(StatusCode::kInvalidArgument, "node '", node.name, "' (", node.op, "): ", parts...);
}

std::string known_attrs(const OpSchema& s) {
  if (s.attrs.empty()) return s.pattern_attr ? " (it takes only output_<i>_* attributes)" : " (it takes none)";
  std::string list;
  for (size_t i = 0; i < s.attrs.size(); ++i) list += (i ? ", " : "") + s.attrs[i].name;
  return " (known: " + list + (s.pattern_attr ? ", output_<i>_shape, output_<i>_dtype" : "") + ")";
}

Status check_attrs(const OpSchema& s, const Node& node) {
  for (const auto& [name, value] : node.attrs) {
    AttrKind kind;
    if (const AttrSpec* spec = s.find_attr(name)) {
      kind = spec->kind;
    } else if (!s.pattern_attr || !s.pattern_attr(name, &kind)) {
      return node_error(node, "unknown attribute '", name, "'", known_attrs(s));
    }
    if (attr_kind_of(value) != kind) {
      return node_error(node, "attribute '", name, "' must be ", attr_kind_name(kind), ", got ",
                        attr_kind_name(attr_kind_of(value)));
    }
  }
  for (const AttrSpec& spec : s.attrs) {
    if (spec.required && !node.attrs.count(spec.name)) {
      return node_error(node, "attribute '", spec.name, "' (", attr_kind_name(spec.kind), ") is required but missing");
    }
  }
  return Status::Ok();
}

std::string arity_text(const OpSchema& s) {
  if (s.variadic()) return std::to_string(s.min_inputs) + " or more";
  if (s.min_inputs == s.max_inputs) return std::to_string(s.min_inputs);
  return std::to_string(s.min_inputs) + " to " + std::to_string(s.max_inputs);
}

}  // namespace

const std::vector<OpSchema>& all_ops() {
  static const std::vector<OpSchema> kOps = build_registry();
  return kOps;
}

const OpSchema* find_op(std::string_view name) {
  const auto& ops = all_ops();
  auto it = std::lower_bound(ops.begin(), ops.end(), name,
                             [](const OpSchema& s, std::string_view n) { return s.name < n; });
  return it != ops.end() && it->name == name ? &*it : nullptr;
}

Result<AttrMap> resolve_attrs(const Node& node) {
  const OpSchema* s = find_op(node.op);
  if (!s) return node_error(node, "unknown op '", node.op, "'");
  GPUU_RETURN_IF_ERROR(check_attrs(*s, node));
  AttrMap attrs = node.attrs;
  for (const AttrSpec& spec : s->attrs) {
    if (spec.has_default && !attrs.count(spec.name)) attrs[spec.name] = spec.default_value;
  }
  if (s->derived_defaults) s->derived_defaults(&attrs);
  return attrs;
}

Status infer(const Graph& graph, const Node& node, std::vector<Value>* outputs) {
  const OpSchema* s = find_op(node.op);
  if (!s) return node_error(node, "unknown op '", node.op, "'");
  size_t n = node.inputs.size();
  if (n < s->min_inputs || (!s->variadic() && n > s->max_inputs)) {
    return node_error(node, node.op, " takes ", arity_text(*s), " inputs, got ", n);
  }
  InferContext c(graph, node, *s);
  c.in.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    ValueId id = node.inputs[i];
    if (id == kNone) {
      if (!s->input_optional(i)) {
        return node_error(node, "input ", i, " (", s->input_name(i), ") is required but was left out (-1)");
      }
      c.in.push_back(nullptr);
      continue;
    }
    if (id < 0 || static_cast<size_t>(id) >= graph.values().size()) {
      return node_error(node, "input ", i, " (", s->input_name(i), ") is value id ", id, ", but the graph has ",
                        graph.values().size(), " values");
    }
    const Value& v = graph.value(id);
    std::string why = shape_problem(v.shape);
    if (!why.empty()) {
      return node_error(node, "input ", i, " (", s->input_name(i), " '", v.name, "') has a bad shape ",
                        shape_to_string(v.shape), ": ", why);
    }
    if (static_cast<int>(v.dtype) >= kDTypeCount) {
      return node_error(node, "input ", i, " (", s->input_name(i), " '", v.name, "') has an unknown dtype");
    }
    c.in.push_back(&v);
  }
  GPUU_ASSIGN_OR_RETURN(c.attrs, resolve_attrs(node));
  GPUU_RETURN_IF_ERROR(s->infer_fn(c));
  for (size_t i = 0; i < c.out.size(); ++i) {
    std::string why = shape_problem(c.out[i].shape);
    if (!why.empty()) {
      return node_error(node, "output ", i, " would have shape ", shape_to_string(c.out[i].shape), ": ", why);
    }
    c.out[i].name = node.name + ":" + std::to_string(i);
  }
  *outputs = std::move(c.out);
  return Status::Ok();
}

}  // namespace gpuu::graph

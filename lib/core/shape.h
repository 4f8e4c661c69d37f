#pragma once
// Shape: the dimensions of a row-major tensor, outermost first.
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& shape);
std::string to_string(const Shape& shape);  // "(2, 3, 4)"

// Row-major strides in elements: strides(2,3,4) == (12, 4, 1).
Shape row_major_strides(const Shape& shape);

}  // namespace attn

// What attention.comp and attention_coopmat.comp do to a score before the
// softmax: the causal rule, the bool mask (bytes, 4 to a word) and the added
// one (scaled to base 2, as the scores are). The includer declares MASK
// (0 none, 1 bool, 2 added), CAUSAL, the mask bindings mask_words and
// mask_t, and `p` with S, L and the mask's strides m_sl, m_ss.

#define NEG_INF uintBitsToFloat(0xFF800000u)
const float LOG2E = 1.4426950408889634;

bool mask_allows(uint at) { return ((mask_words[at >> 2u] >> ((at & 3u) * 8u)) & 0xFFu) != 0u; }

// Score `s` (base 2) of query `row` for `key`, the mask's row of this
// (batch, head) at `m_base`: -inf where the key is past S, past the diagonal
// (CAUSAL) or masked out.
float masked_score(float s, uint row, uint key, uint m_base) {
  bool allowed = key < p.S && (CAUSAL == 0 || key <= row);
  if (MASK != 0 && allowed && row < p.L) {
    const uint at = m_base + row * p.m_sl + key * p.m_ss;
    if (MASK == 1) {
      allowed = mask_allows(at);
    } else {
      s += float(mask_t[at]) * LOG2E;
    }
  }
  return allowed ? s : NEG_INF;
}

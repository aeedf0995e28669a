/* Greedy generation from C with the step program of samples/llm/llama_decode.py (--out PROGRAM writes one):
 * each execute takes token ids [1, s] and their positions [s] (both i64), writes the step's keys and values
 * into the KV caches the program keeps as states on the device, and returns the logits of its last token
 * [1, vocab]. s is a dim of the program: the prompt goes in executes whose lengths are powers of two, largest
 * first (13 tokens: s = 8, 4, 1), then each argmax is fed back in an execute of one token (s = 1). The session
 * specializes and records the program once per length it meets, so powers of two keep that to log2(max) + 1
 * lengths whatever the prompts (one execute of the whole prompt would make one per prompt length). Prints the
 * new tokens.
 *
 *   gpuu_llm_generate PROGRAM NEW_TOKENS PROMPT_TOKEN...
 */
#include <gpuu.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char* what, gpuu_status status) {
  fprintf(stderr, "gpuu_llm_generate: %s: %s (%s)\n", what, gpuu_status_string(status), gpuu_last_error());
  return 1;
}

/* Sets the step's length: token ids [1, count], positions [count]. The session runs the program specialized
 * at that length (made on first use, then kept); the caches carry over. */
static gpuu_status set_step_length(gpuu_session* session, size_t count) {
  const int64_t shapes[] = {1, (int64_t)count, (int64_t)count};
  return gpuu_session_set_input_shapes(session, shapes, sizeof shapes / sizeof shapes[0]);
}

/* One step at the length set last: `count` tokens at positions start, start + 1, ... in; the argmax of the
 * last token's logits out (in *next). `positions` is scratch room for `count` entries. */
static gpuu_status step(gpuu_session* session, const int64_t* tokens, int64_t* positions, size_t count,
                        int64_t start, float* logits, size_t vocab, int64_t* next) {
  for (size_t i = 0; i < count; ++i) positions[i] = start + (int64_t)i;
  gpuu_status s = gpuu_session_set_input(session, 0, tokens, count * sizeof *tokens);
  if (s == GPUU_OK) s = gpuu_session_set_input(session, 1, positions, count * sizeof *positions);
  if (s == GPUU_OK) s = gpuu_session_execute(session);
  if (s == GPUU_OK) s = gpuu_session_get_output(session, 0, logits, vocab * sizeof *logits);
  if (s != GPUU_OK) return s;
  size_t best = 0;
  for (size_t i = 1; i < vocab; ++i) {
    if (logits[i] > logits[best]) best = i;  /* the first of equal maxima, as torch.argmax */
  }
  *next = (int64_t)best;
  return GPUU_OK;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: gpuu_llm_generate PROGRAM NEW_TOKENS PROMPT_TOKEN...\n");
    return 2;
  }
  const int new_tokens = atoi(argv[2]);
  const size_t prompt_len = (size_t)(argc - 3);
  gpuu_program* program = NULL;
  gpuu_status s = gpuu_program_load_file(argv[1], &program);
  if (s != GPUU_OK) return fail("load", s);
  /* Every position must fit the caches, whose length is the seq dim's upper bound: the prompt's steps would each
   * pass the dim's bounds check on their own, but write past the caches' end. */
  const char* dim_name = NULL;
  int64_t seq_min = 0, seq_max = 0, seq_example = 0;
  s = gpuu_program_dim_info(program, 0, &dim_name, &seq_min, &seq_max, &seq_example);
  if (s != GPUU_OK) {
    gpuu_program_release(program);
    return fail("not a step with a seq dim", s);
  }
  /* The last new token is printed, never fed back: it takes no position. */
  const int64_t positions_needed = (int64_t)prompt_len + (new_tokens > 1 ? new_tokens - 1 : 0);
  if (positions_needed > seq_max) {
    fprintf(stderr, "gpuu_llm_generate: %zu prompt tokens and %d new ones need %lld positions; the caches hold %lld\n",
            prompt_len, new_tokens, (long long)positions_needed, (long long)seq_max);
    gpuu_program_release(program);
    return 2;
  }
  gpuu_session* session = NULL;
  s = gpuu_session_create(program, NULL, &session);
  gpuu_program_release(program);
  if (s != GPUU_OK) return fail("session", s);
  gpuu_tensor_info out = {sizeof out};
  s = gpuu_session_output_info(session, 0, &out);
  if (s != GPUU_OK || out.dtype != GPUU_DTYPE_F32 || out.rank != 2) {
    gpuu_session_destroy(session);
    return s != GPUU_OK ? fail("output info", s) : (fprintf(stderr, "not a step: logits [1, vocab] f32\n"), 1);
  }
  /* The logits' shape does not follow the step's length. */
  const size_t vocab = (size_t)out.shape[1];
  float* logits = malloc(vocab * sizeof *logits);
  int64_t* tokens = malloc(prompt_len * sizeof *tokens);
  int64_t* positions = malloc(prompt_len * sizeof *positions);
  if (!logits || !tokens || !positions) {
    free(logits);
    free(tokens);
    free(positions);
    gpuu_session_destroy(session);
    fprintf(stderr, "gpuu_llm_generate: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < prompt_len; ++i) tokens[i] = atoll(argv[3 + i]);
  int64_t next = 0;
  const char* what = "prefill";
  size_t done = 0;
  size_t length = 1;
  while (length <= prompt_len / 2) length <<= 1; /* the largest power of two within the prompt */
  for (; length && s == GPUU_OK; length >>= 1) {
    if (!(prompt_len & length)) continue;
    s = set_step_length(session, length);
    if (s == GPUU_OK) s = step(session, tokens + done, positions, length, (int64_t)done, logits, vocab, &next);
    done += length;
  }
  if (s == GPUU_OK && new_tokens > 1) {
    what = "decode step";
    s = set_step_length(session, 1);
  }
  int64_t position = (int64_t)prompt_len;
  for (int i = 0; i < new_tokens && s == GPUU_OK; ++i) {
    printf("%s%lld", i ? " " : "", (long long)next);
    if (i + 1 < new_tokens) s = step(session, &next, positions, 1, position++, logits, vocab, &next);
  }
  printf("\n");
  free(logits);
  free(tokens);
  free(positions);
  gpuu_session_destroy(session);
  return s == GPUU_OK ? 0 : fail(what, s);
}

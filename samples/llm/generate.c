/* Greedy generation from C with a decode-step program (samples/llm/llama_decode.py --out PROGRAM writes
 * one): each execute takes a token [1, 1] and its position [1] (both i64), writes the step's keys and
 * values into the KV caches the program keeps as states on the device, and returns the logits [1, vocab];
 * the prompt goes in one token per step, then each argmax is fed back. Prints the new tokens.
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

/* One decode step: `token` at `position` in, the argmax of the logits out (in *next). */
static gpuu_status step(gpuu_session* session, int64_t token, int64_t position, float* logits, size_t vocab,
                        int64_t* next) {
  gpuu_status s = gpuu_session_set_input(session, 0, &token, sizeof token);
  if (s == GPUU_OK) s = gpuu_session_set_input(session, 1, &position, sizeof position);
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
  gpuu_program* program = NULL;
  gpuu_status s = gpuu_program_load_file(argv[1], &program);
  if (s != GPUU_OK) return fail("load", s);
  gpuu_session* session = NULL;
  s = gpuu_session_create(program, NULL, &session);
  gpuu_program_release(program);
  if (s != GPUU_OK) return fail("session", s);
  gpuu_tensor_info out = {sizeof out};
  s = gpuu_session_output_info(session, 0, &out);
  if (s != GPUU_OK || out.dtype != GPUU_DTYPE_F32 || out.rank != 2) {
    gpuu_session_destroy(session);
    return s != GPUU_OK ? fail("output info", s) : (fprintf(stderr, "not a decode step: logits [1, vocab] f32\n"), 1);
  }
  const size_t vocab = (size_t)out.shape[1];
  float* logits = malloc(vocab * sizeof *logits);
  int64_t position = 0, next = 0;
  for (int i = 3; i < argc && s == GPUU_OK; ++i) s = step(session, atoll(argv[i]), position++, logits, vocab, &next);
  for (int i = 0; i < new_tokens && s == GPUU_OK; ++i) {
    printf("%s%lld", i ? " " : "", (long long)next);
    if (i + 1 < new_tokens) s = step(session, next, position++, logits, vocab, &next);
  }
  printf("\n");
  free(logits);
  gpuu_session_destroy(session);
  return s == GPUU_OK ? 0 : fail("decode step", s);
}

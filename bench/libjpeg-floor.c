/*
 * The native floor of the pack-time JPEG check, for `bench/pack-local.ts --check`: libjpeg-turbo
 * itself (the system's libjpeg, Debian's libjpeg62-turbo), without sharp's per-call cost. Every
 * JPEG named on stdin (one path a line) is read into memory, then decoded from memory at 1/8 scale
 * (scale_denom 8: every entropy-coded block Huffman-decoded, DC-only IDCT), the cheapest decode that
 * still reads every block, with any libjpeg warning (such as "premature end of data segment")
 * taken as a refusal, as the check refuses. Single-threaded; the CPU time is this thread's.
 * Prints `<files> files <cpuSeconds> cpu refuses-cut yes|no <bad> bad`, where refuses-cut says
 * whether the first file, cut at 60 % with FF D9 appended, is refused. Built by the bench with
 * `cc -O2 -o dist/bench/libjpeg-floor bench/libjpeg-floor.c -ljpeg` (needs libjpeg-dev).
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jpeglib.h>

struct refusal {
  struct jpeg_error_mgr manager;
  jmp_buf jump;
};

static void refuse(j_common_ptr info) { longjmp(((struct refusal *)info->err)->jump, 1); }

/* Level -1 is a warning: corrupt data libjpeg would otherwise decode as grey. */
static void refuse_warnings(j_common_ptr info, int level) {
  if (level < 0) refuse(info);
}

static JSAMPLE row[65536 * 4];

/* 0 when the JPEG decodes to its end without a warning, 1 when refused. */
static int decode(const unsigned char *data, unsigned long size) {
  struct jpeg_decompress_struct decoder;
  struct refusal refusal;
  JSAMPROW rows = row;
  decoder.err = jpeg_std_error(&refusal.manager);
  refusal.manager.error_exit = refuse;
  refusal.manager.emit_message = refuse_warnings;
  if (setjmp(refusal.jump)) {
    jpeg_destroy_decompress(&decoder);
    return 1;
  }
  jpeg_create_decompress(&decoder);
  jpeg_mem_src(&decoder, data, size);
  jpeg_read_header(&decoder, TRUE);
  decoder.scale_num = 1;
  decoder.scale_denom = 8;
  jpeg_start_decompress(&decoder);
  while (decoder.output_scanline < decoder.output_height) jpeg_read_scanlines(&decoder, &rows, 1);
  jpeg_finish_decompress(&decoder);
  jpeg_destroy_decompress(&decoder);
  return 0;
}

static unsigned char *read_file(const char *name, unsigned long *size) {
  FILE *file = fopen(name, "rb");
  unsigned char *data;
  if (!file) {
    perror(name);
    exit(1);
  }
  fseek(file, 0, SEEK_END);
  *size = (unsigned long)ftell(file);
  rewind(file);
  data = malloc(*size + 2);
  if (fread(data, 1, *size, file) != *size) {
    perror(name);
    exit(1);
  }
  fclose(file);
  return data;
}

int main(void) {
  size_t capacity = 1024, count = 0, i;
  unsigned char **files = malloc(capacity * sizeof *files);
  unsigned long *sizes = malloc(capacity * sizeof *sizes), cut;
  char name[4096];
  struct timespec start, end;
  int bad = 0, refusesCut;
  while (fgets(name, sizeof name, stdin)) {
    name[strcspn(name, "\n")] = 0;
    if (!name[0]) continue;
    if (count == capacity) {
      capacity *= 2;
      files = realloc(files, capacity * sizeof *files);
      sizes = realloc(sizes, capacity * sizeof *sizes);
    }
    files[count] = read_file(name, &sizes[count]);
    count++;
  }
  if (count == 0) {
    fprintf(stderr, "libjpeg-floor: no files named on stdin\n");
    return 1;
  }
  /* The first file cut at 60 %, FF D9 appended (read_file left room for the two bytes). */
  cut = sizes[0] * 6 / 10;
  {
    unsigned char *copy = malloc(cut + 2);
    memcpy(copy, files[0], cut);
    copy[cut] = 0xff;
    copy[cut + 1] = 0xd9;
    refusesCut = decode(copy, cut + 2);
    free(copy);
  }
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  for (i = 0; i < count; i++) bad += decode(files[i], sizes[i]);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
  printf("%zu files %.6f cpu refuses-cut %s %d bad\n", count,
    (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9, refusesCut ? "yes" : "no", bad);
  return 0;
}

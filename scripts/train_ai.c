/*
 * The self-play loop of scripts/train_ai.py, in C: that script compiles this
 * file, runs it and packs what it writes into the shipped weights file. Read
 * its docstring first; this file is only the hot loop.
 *
 * Why C: the loop is a few hundred integer and floating-point operations a
 * move, run for hundreds of millions of moves. Measured here over the first
 * minute from scratch (plain TD, rate 0.1, seed 2048, one stage), the
 * Python loop it replaces played 8,000 games under PyPy (about 0.17M moves a
 * second) and this one 41,000 (1.13M moves a second): one 80-minute run is
 * about 9 hours of PyPy. The AI that plays the game stays pure Python and
 * only reads the weights this makes.
 *
 * What it computes is fixed by the command line and the files it reads: the
 * generator (SplitMix64 and the spawn rule of ansi2048.engine, the same
 * draws the game makes), the features (passed in by the script, from
 * ansi2048.ai.ntuple), IEEE doubles in a fixed order (compiled without
 * floating-point contraction), one thread.
 *
 * Board: 64 bits, 4 a cell, cell (r, c) at bit 4 * (4 * r + c) holding the
 * tile's rank (0 empty, k a tile of 2**k), as in ansi2048.ai.bitboard.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t board_t;

#define ROWS 65536
#define MAX_FEATURES 64
#define MAX_STAGES 8
#define MAX_TABLES 8
#define BUFFER 4096

static uint16_t row_left[ROWS], row_right[ROWS];
static uint32_t row_score[ROWS];

static uint16_t reverse_row(uint32_t x) {
    return (uint16_t)(((x & 0xF) << 12) | ((x & 0xF0) << 4) | ((x >> 4) & 0xF0) | (x >> 12));
}

/* Slide every row left (toward nibble 0); two 32768s (rank 15) do not merge,
   as in ansi2048.ai.bitboard. */
static void init_rows(void) {
    for (uint32_t r = 0; r < ROWS; r++) {
        int tiles[4], n = 0;
        for (int i = 0; i < 4; i++) {
            int x = (r >> (4 * i)) & 15;
            if (x) tiles[n++] = x;
        }
        uint32_t out = 0, points = 0;
        int shift = 0;
        for (int j = 0; j < n;) {
            int x = tiles[j];
            if (j + 1 < n && tiles[j + 1] == x && x < 15) {
                x++;
                points += 1u << x;
                j += 2;
            } else {
                j++;
            }
            out |= (uint32_t)x << shift;
            shift += 4;
        }
        row_left[r] = (uint16_t)out;
        row_score[r] = points;
    }
    for (uint32_t r = 0; r < ROWS; r++) row_right[r] = reverse_row(row_left[reverse_row(r)]);
}

static board_t transpose(board_t b) {
    board_t a = (b & 0xF0F00F0FF0F00F0FULL) | ((b & 0x0000F0F00000F0F0ULL) << 12) | ((b >> 12) & 0x0000F0F00000F0F0ULL);
    return (a & 0xFF00FF0000FF00FFULL) | ((a & 0x00FF00FF00000000ULL) >> 24) | ((a << 24) & 0x00FF00FF00000000ULL);
}

/* Up, down, left, right (the order of ansi2048.ai.heuristic.MOVE_NAMES). */
static void all_moves(board_t b, board_t after[4], uint32_t points[4]) {
    board_t t = transpose(b), u = 0, d = 0, l = 0, r = 0;
    uint32_t row_points = 0, col_points = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t row = (uint32_t)(b >> (16 * i)) & 0xFFFF, col = (uint32_t)(t >> (16 * i)) & 0xFFFF;
        l |= (board_t)row_left[row] << (16 * i);
        r |= (board_t)row_right[row] << (16 * i);
        u |= (board_t)row_left[col] << (16 * i);
        d |= (board_t)row_right[col] << (16 * i);
        row_points += row_score[row];
        col_points += row_score[col];
    }
    after[0] = transpose(u);
    after[1] = transpose(d);
    after[2] = l;
    after[3] = r;
    points[0] = points[1] = col_points;
    points[2] = points[3] = row_points;
}

/* -- the generator: ansi2048.engine.SplitMix64 and spawn_draw ------------- */

static uint64_t rng_state;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static board_t spawn(board_t b) {
    int empty[16], n = 0;
    for (int i = 0; i < 16; i++)
        if (!((b >> (4 * i)) & 15)) empty[n++] = i;
    if (!n) return b;
    uint64_t draw = rng_next();
    int nth = (int)(((unsigned __int128)draw * (unsigned)n) >> 64);
    board_t rank = (draw & 0xFFFFFFFFULL) < ((1ULL << 32) / 10) ? 2 : 1;
    return b | (rank << (4 * empty[nth]));
}

static int max_rank(board_t b) {
    int top = 0;
    for (int i = 0; i < 16; i++) {
        int x = (b >> (4 * i)) & 15;
        if (x > top) top = x;
    }
    return top;
}

/* -- the network ------------------------------------------------------------- */

static int n_features, n_tables, n_stages;
static int feature_table[MAX_FEATURES], feature_shift[MAX_FEATURES][4];
static int stage_rank[MAX_STAGES];
static size_t stage_size;        /* n_tables * ROWS */
static double *weights;          /* n_stages * stage_size */
static unsigned char *promoted;  /* per weight of stage >= 1: taken from the stage below yet? */
static double *error_sum, *abs_error_sum; /* TC learning only */
static int use_tc;
static double rate;

static int stage_of(board_t b) {
    int top = max_rank(b), s = 0;
    while (s + 1 < n_stages && top >= stage_rank[s + 1]) s++;
    return s;
}

/* A later stage's weight starts as the stage below's weight at the moment the
   later stage first uses it (weight promotion, Jaskowski 2018). */
static double *weight(int s, size_t i) {
    double *w = &weights[s * stage_size + i];
    if (s && !promoted[s * stage_size + i]) {
        *w = *weight(s - 1, i);
        promoted[s * stage_size + i] = 1;
    }
    return w;
}

static int indices(board_t b, size_t out[MAX_FEATURES]) {
    for (int f = 0; f < n_features; f++) {
        const int *sh = feature_shift[f];
        out[f] = (size_t)feature_table[f] * ROWS + ((b >> sh[0]) & 15) + (((b >> sh[1]) & 15) << 4) +
                 (((b >> sh[2]) & 15) << 8) + (((b >> sh[3]) & 15) << 12);
    }
    return stage_of(b);
}

static double value_at(int s, const size_t idx[MAX_FEATURES]) {
    double v = 0.0;
    for (int f = 0; f < n_features; f++) v += *weight(s, idx[f]);
    return v;
}

static void learn(int s, const size_t idx[MAX_FEATURES], double delta) {
    for (int f = 0; f < n_features; f++) {
        double *w = weight(s, idx[f]);
        if (use_tc) {
            size_t k = s * stage_size + idx[f];
            double a = abs_error_sum[k];
            *w += rate * (a > 0.0 ? fabs(error_sum[k]) / a : 1.0) * delta;
            error_sum[k] += delta;
            abs_error_sum[k] += fabs(delta);
        } else {
            *w += rate * delta;
        }
    }
}

/* -- restarts: boards where a game entered each stage ------------------------ */

static board_t buffer[MAX_STAGES][BUFFER];
static uint32_t buffered[MAX_STAGES];

static void keep_start(int s, board_t b) {
    if (buffered[s] < BUFFER)
        buffer[s][buffered[s]++] = b;
    else
        buffer[s][rng_next() % BUFFER] = b;
}

/* -- a game ------------------------------------------------------------------ */

typedef struct {
    uint64_t score;
    int top;
    uint64_t moves;
} result_t;

static result_t play(board_t b) {
    result_t res = {0, 0, 0};
    size_t prev[MAX_FEATURES], idx[MAX_FEATURES], best_idx[MAX_FEATURES];
    int prev_stage = 0, have_prev = 0, entered = stage_of(b);
    for (;;) {
        board_t after[4];
        uint32_t points[4];
        all_moves(b, after, points);
        double best = -INFINITY;
        int chosen = -1, best_stage = 0;
        for (int m = 0; m < 4; m++) {
            if (after[m] == b) continue;
            int s = indices(after[m], idx);
            double v = points[m] + value_at(s, idx);
            if (v > best) {
                best = v;
                chosen = m;
                best_stage = s;
                memcpy(best_idx, idx, sizeof(size_t) * n_features);
            }
        }
        /* The previous afterstate's value is read now, after any update since,
           so the error is that of the weights being changed. */
        if (chosen < 0) {
            if (have_prev) learn(prev_stage, prev, -value_at(prev_stage, prev));
            break;
        }
        if (have_prev) learn(prev_stage, prev, best - value_at(prev_stage, prev));
        memcpy(prev, best_idx, sizeof(size_t) * n_features);
        prev_stage = best_stage;
        have_prev = 1;
        res.score += points[chosen];
        res.moves++;
        b = spawn(after[chosen]);
        int s = stage_of(b);
        while (entered < s) keep_start(++entered, b);
    }
    res.top = max_rank(b);
    return res;
}

/* -- files ------------------------------------------------------------------- */

static const char CKPT_MAGIC[8] = "A2048CK2";

static void die(const char *what, const char *path) {
    fprintf(stderr, "train_ai: %s: %s\n", what, path);
    exit(1);
}

static void write_all(FILE *fh, const void *data, size_t size, const char *path) {
    if (fwrite(data, 1, size, fh) != size) die("cannot write", path);
}

static void read_all(FILE *fh, void *data, size_t size, const char *path) {
    if (fread(data, 1, size, fh) != size) die("truncated", path);
}

/* Everything a resumed run needs to go on exactly as if never stopped. */
static void save_checkpoint(const char *path, const char *settings, uint64_t games, uint64_t fresh) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *fh = fopen(tmp, "wb");
    if (!fh) die("cannot write", tmp);
    uint32_t len = (uint32_t)strlen(settings);
    write_all(fh, CKPT_MAGIC, 8, tmp);
    write_all(fh, &len, 4, tmp);
    write_all(fh, settings, len, tmp);
    write_all(fh, &rng_state, 8, tmp);
    write_all(fh, &games, 8, tmp);
    write_all(fh, &fresh, 8, tmp);
    write_all(fh, weights, sizeof(double) * n_stages * stage_size, tmp);
    write_all(fh, promoted, n_stages * stage_size, tmp);
    if (use_tc) {
        write_all(fh, error_sum, sizeof(double) * n_stages * stage_size, tmp);
        write_all(fh, abs_error_sum, sizeof(double) * n_stages * stage_size, tmp);
    }
    write_all(fh, buffered, sizeof buffered, tmp);
    write_all(fh, buffer, sizeof buffer, tmp);
    if (fclose(fh)) die("cannot write", tmp);
    if (rename(tmp, path)) die("cannot rename", tmp);
}

static void load_checkpoint(const char *path, const char *settings, uint64_t *games, uint64_t *fresh) {
    FILE *fh = fopen(path, "rb");
    if (!fh) die("cannot read", path);
    char magic[8];
    uint32_t len;
    read_all(fh, magic, 8, path);
    if (memcmp(magic, CKPT_MAGIC, 8)) die("not a training checkpoint", path);
    read_all(fh, &len, 4, path);
    char *kept = calloc(len + 1, 1);
    read_all(fh, kept, len, path);
    if (strcmp(kept, settings)) {
        fprintf(stderr, "train_ai: the checkpoint was made with other settings:\n  %s\nnot\n  %s\n", kept, settings);
        exit(1);
    }
    free(kept);
    read_all(fh, &rng_state, 8, path);
    read_all(fh, games, 8, path);
    read_all(fh, fresh, 8, path);
    read_all(fh, weights, sizeof(double) * n_stages * stage_size, path);
    read_all(fh, promoted, n_stages * stage_size, path);
    if (use_tc) {
        read_all(fh, error_sum, sizeof(double) * n_stages * stage_size, path);
        read_all(fh, abs_error_sum, sizeof(double) * n_stages * stage_size, path);
    }
    read_all(fh, buffered, sizeof buffered, path);
    read_all(fh, buffer, sizeof buffer, path);
    fclose(fh);
}

/* The weights of every stage, each weight a later stage never used taken from
   the stage below (what the stage would have started from), as doubles. */
static void save_weights(const char *path) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *fh = fopen(tmp, "wb");
    if (!fh) die("cannot write", tmp);
    double *row = malloc(sizeof(double) * stage_size);
    double *below = malloc(sizeof(double) * stage_size);
    for (int s = 0; s < n_stages; s++) {
        for (size_t i = 0; i < stage_size; i++)
            row[i] = (s == 0 || promoted[s * stage_size + i]) ? weights[s * stage_size + i] : below[i];
        write_all(fh, row, sizeof(double) * stage_size, tmp);
        memcpy(below, row, sizeof(double) * stage_size);
    }
    free(row);
    free(below);
    if (fclose(fh)) die("cannot write", tmp);
    if (rename(tmp, path)) die("cannot rename", tmp);
}

/* -- the command line -------------------------------------------------------- */

static const char USAGE[] =
    "usage: train_ai STATE FEATURES STAGES GAMES RATE FINE_FROM FINE_RATE TC CAROUSEL CHECKPOINT LOG MINUTES OUT "
    "[INIT|-] [RESUME|-] [KEEP]\n"
    "       train_ai selftest STATE\n"
    "  run by scripts/train_ai.py, which documents the settings\n";

static void parse_list(const char *text, int *out, int max, int *count) {
    *count = 0;
    char *copy = strdup(text), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*count >= max) die("too many numbers in", text);
        out[(*count)++] = atoi(tok);
    }
    free(copy);
}

/* Moves and spawns for the tests: read boards (decimal, one a line) and print
   each move's afterstate and points, then a spawn from the generator. */
static int selftest(void) {
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        board_t b = strtoull(line, NULL, 10), after[4];
        uint32_t points[4];
        all_moves(b, after, points);
        for (int m = 0; m < 4; m++) printf("%llu %u ", (unsigned long long)after[m], points[m]);
        printf("%llu\n", (unsigned long long)spawn(b));
    }
    return 0;
}

int main(int argc, char **argv) {
    init_rows();
    if (argc == 3 && !strcmp(argv[1], "selftest")) {
        rng_state = strtoull(argv[2], NULL, 10);
        return selftest();
    }
    if (argc < 14) {
        fputs(USAGE, stderr);
        return 2;
    }
    rng_state = strtoull(argv[1], NULL, 10);

    int flat[MAX_FEATURES * 5], count;
    parse_list(argv[2], flat, MAX_FEATURES * 5, &count);
    if (count % 5 || count == 0) die("features must be table,shift,shift,shift,shift", argv[2]);
    n_features = count / 5;
    n_tables = 0;
    for (int f = 0; f < n_features; f++) {
        feature_table[f] = flat[5 * f];
        for (int j = 0; j < 4; j++) feature_shift[f][j] = flat[5 * f + 1 + j];
        if (feature_table[f] + 1 > n_tables) n_tables = feature_table[f] + 1;
    }
    if (n_tables > MAX_TABLES) die("too many tables", argv[2]);
    parse_list(argv[3], stage_rank, MAX_STAGES, &n_stages);
    if (!n_stages || stage_rank[0] != 0) die("stages must start at rank 0", argv[3]);
    uint64_t games_wanted = strtoull(argv[4], NULL, 10);
    double base_rate = atof(argv[5]);
    uint64_t fine_from = strtoull(argv[6], NULL, 10);
    double fine_rate = atof(argv[7]);
    use_tc = atoi(argv[8]);
    int carousel = atoi(argv[9]);
    uint64_t checkpoint_every = strtoull(argv[10], NULL, 10);
    uint64_t log_every = strtoull(argv[11], NULL, 10);
    double minutes = atof(argv[12]);
    const char *out = argv[13];
    const char *init = argc > 14 && strcmp(argv[14], "-") ? argv[14] : NULL;
    const char *resume = argc > 15 && strcmp(argv[15], "-") ? argv[15] : NULL;
    int keep = argc > 16 && atoi(argv[16]);

    /* What fixes the run; a checkpoint must have been made with the same. */
    char settings[8192];
    snprintf(settings, sizeof settings, "state=%s features=%s stages=%s rate=%s fine_from=%s fine_rate=%s tc=%s carousel=%s",
             argv[1], argv[2], argv[3], argv[5], argv[6], argv[7], argv[8], argv[9]);

    stage_size = (size_t)n_tables * ROWS;
    weights = calloc(n_stages * stage_size, sizeof(double));
    promoted = calloc(n_stages * stage_size, 1);
    if (use_tc) {
        error_sum = calloc(n_stages * stage_size, sizeof(double));
        abs_error_sum = calloc(n_stages * stage_size, sizeof(double));
    }
    if (!weights || !promoted || (use_tc && (!error_sum || !abs_error_sum))) die("out of memory", out);
    if (init) {
        FILE *fh = fopen(init, "rb");
        if (!fh) die("cannot read", init);
        read_all(fh, weights, sizeof(double) * stage_size, init);
        fclose(fh);
    }
    uint64_t games = 0, fresh = 0;
    char ckpt[4096];
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", out);
    if (resume) {
        load_checkpoint(resume, settings, &games, &fresh);
        printf("# resuming after %llu games\n", (unsigned long long)games);
    }

    time_t start = time(NULL);
    uint64_t sum_score = 0, logged = 0, moves = 0, reach[17] = {0};
    while (games < games_wanted) {
        rate = (fine_from && games >= fine_from ? fine_rate : base_rate) / n_features;
        /* The carousel (Jaskowski 2018): game g starts where an earlier game
           entered stage g mod stages, so the late stages, which few games
           reach, learn as often as the first. */
        int s = carousel ? (int)(games % n_stages) : 0;
        board_t b;
        if (s && buffered[s])
            b = buffer[s][rng_next() % buffered[s]];
        else {
            s = 0;
            b = spawn(spawn(0));
        }
        result_t res = play(b);
        games++;
        moves += res.moves;
        if (s == 0) {
            fresh++;
            logged++;
            sum_score += res.score;
            for (int k = 0; k <= res.top; k++) reach[k]++;
            if (logged == log_every) {
                double n = (double)logged;
                printf("games %9llu  fresh %8llu  %6.0fs  %5.2fM moves/s  mean %8.0f  2048 %5.1f%%  4096 %5.1f%%  "
                       "8192 %5.1f%%  16384 %5.1f%%  32768 %5.1f%%\n",
                       (unsigned long long)games, (unsigned long long)fresh, difftime(time(NULL), start),
                       moves / 1e6 / (difftime(time(NULL), start) + 1e-9), sum_score / n, 100 * reach[11] / n,
                       100 * reach[12] / n, 100 * reach[13] / n, 100 * reach[14] / n, 100 * reach[15] / n);
                fflush(stdout);
                logged = sum_score = 0;
                memset(reach, 0, sizeof reach);
            }
        }
        if (checkpoint_every && games % checkpoint_every == 0) {
            save_checkpoint(ckpt, settings, games, fresh);
            save_weights(out);
            if (keep) {
                /* A copy of each checkpoint's weights, for averaging later. */
                char kept[4096];
                snprintf(kept, sizeof kept, "%s.%llu", out, (unsigned long long)games);
                save_weights(kept);
            }
        }
        if (minutes > 0 && games % 16 == 0 && difftime(time(NULL), start) > 60 * minutes) {
            printf("# time limit: stopping after %llu games\n", (unsigned long long)games);
            break;
        }
    }
    save_checkpoint(ckpt, settings, games, fresh);
    save_weights(out);
    printf("# done: %llu games (%llu from the start), %.0fs\n", (unsigned long long)games, (unsigned long long)fresh,
           difftime(time(NULL), start));
    return 0;
}

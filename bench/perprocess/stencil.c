/* A small MPI proxy of a coupled fluid + particle code (HemoCell-like, paper 003), for per-process models.
 *
 * Each rank owns a box of nx × ny × nz cells in a non-periodic px × py × pz process grid and holds
 * `particles` particles.  Every time step it
 *   stencil        relaxes its field with a 7-point Jacobi sweep             (work ∝ volume)
 *   halo           exchanges FIELDS layers of each face with its neighbours  (work ∝ surface, neighbours)
 *   particles      interpolates the field at each particle, relaxes its      (work ∝ particles)
 *                  membrane springs and moves it
 *   particle_sync  packs and sends each neighbour the envelope of its particles (∝ particles × neighbours)
 *   allreduce      sums the residual over all ranks                         (waits for the slowest rank)
 * The per-rank layout (box size and particles) comes from a file, so any balanced or imbalanced
 * distribution can be run.  Waits poll with short sleeps, so ranks that wait give their core to
 * ranks that compute when the machine is oversubscribed.
 *
 * Usage: mpirun -np P stencil LAYOUT ITERATIONS PX PY PZ
 *   LAYOUT has one line per rank: "nx ny nz particles".
 * Output (rank 0, stdout): one CSV line per rank with its coordinates, neighbours and, per section,
 * wall-clock and thread CPU seconds (header first).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>

#define FIELDS 4            /* values exchanged per face cell (like several distributions of an LBM) */
#define ENVELOPE 512        /* doubles per particle in its envelope; an eighth goes to each neighbour */
#define MEMBRANE 32         /* springs per particle in its mechanics */
#define SECTIONS 9
enum { SETUP, STENCIL, HALO, HALO_WAIT, PARTICLES, PSYNC, PSYNC_WAIT, ALLREDUCE, LOOP };
static const char *NAMES[SECTIONS] = {"setup", "stencil", "halo", "halo_wait", "particles", "particle_sync",
                                      "particle_sync_wait", "allreduce", "loop"};

static double wall[SECTIONS], cpu[SECTIONS];

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

typedef struct { double w, c; } stamp;
static stamp start(void) { stamp s = {MPI_Wtime(), cpu_now()}; return s; }
static void stop(int section, stamp s) { wall[section] += MPI_Wtime() - s.w; cpu[section] += cpu_now() - s.c; }

/* Wait for requests: poll (which also moves large messages along), and sleep 20 µs after every 64 polls
 * so that an oversubscribed core goes to a rank with work. */
static void wait_all(int n, MPI_Request *requests) {
    int done = 0;
    struct timespec nap = {0, 20000};
    for (long polls = 1; !done; polls++) {
        MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE);
        if (!done && polls % 64 == 0) nanosleep(&nap, NULL);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  /* sleep 20 µs, not the default 50 µs more */
    stamp setup = start();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 6) {
        if (rank == 0) fprintf(stderr, "usage: stencil LAYOUT ITERATIONS PX PY PZ\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int iterations = atoi(argv[2]);
    int dims[3] = {atoi(argv[3]), atoi(argv[4]), atoi(argv[5])};
    if (dims[0] * dims[1] * dims[2] != size) {
        if (rank == 0) fprintf(stderr, "grid %dx%dx%d does not hold %d ranks\n", dims[0], dims[1], dims[2], size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int nx = 0, ny = 0, nz = 0;
    long particles = 0;
    FILE *layout = fopen(argv[1], "r");
    if (!layout) { perror(argv[1]); MPI_Abort(MPI_COMM_WORLD, 2); }
    for (int r = 0; r <= rank; r++) {
        if (fscanf(layout, "%d %d %d %ld", &nx, &ny, &nz, &particles) != 4) {
            fprintf(stderr, "%s: no line for rank %d\n", argv[1], r);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    fclose(layout);

    /* rank = ix + px·(iy + py·iz), x fastest, as the driver lays ranks out */
    int coords[3] = {rank % dims[0], (rank / dims[0]) % dims[1], rank / (dims[0] * dims[1])};
    int neighbour[6], neighbours = 0;
    for (int axis = 0; axis < 3; axis++) {
        for (int side = 0; side < 2; side++) {
            int c[3] = {coords[0], coords[1], coords[2]};
            c[axis] += side ? 1 : -1;
            int inside = c[axis] >= 0 && c[axis] < dims[axis];
            neighbour[2 * axis + side] = inside ? c[0] + dims[0] * (c[1] + dims[1] * c[2]) : MPI_PROC_NULL;
            neighbours += inside;
        }
    }

    size_t sx = nx + 2, sy = ny + 2, sz = nz + 2, cells = sx * sy * sz;
    double *u = malloc(cells * sizeof *u), *v = malloc(cells * sizeof *v);
    for (size_t i = 0; i < cells; i++) u[i] = v[i] = (double)(i % 97) / 97.0;
#define AT(a, i, j, k) (a)[((size_t)(k) * sy + (j)) * sx + (i)]
    size_t face[3] = {(size_t)ny * nz, (size_t)nx * nz, (size_t)nx * ny};
    double *sendbuf[6], *recvbuf[6];
    for (int f = 0; f < 6; f++) {
        sendbuf[f] = malloc(FIELDS * face[f / 2] * sizeof(double) + 8);
        recvbuf[f] = malloc(FIELDS * face[f / 2] * sizeof(double) + 8);
    }
    double *px = malloc((particles + 1) * 3 * sizeof(double));
    unsigned seed = 12345u + rank;
    /* particles spread evenly through the box in memory order (as codes keep them sorted by cell) */
    for (long p = 0; p < particles; p++) {
        double at = ((double)p + 0.5) / (double)particles * (double)(nx - 1) * (ny - 1) * (nz - 1);
        seed = seed * 1103515245u + 12345u;
        px[3 * p] = 1 + fmod(at, nx - 1) + 0.3 * ((seed >> 8) % 1000) / 1000.0;
        px[3 * p + 1] = 1 + fmod(floor(at / (nx - 1)), ny - 1);
        px[3 * p + 2] = 1 + floor(at / ((double)(nx - 1) * (ny - 1)));
        if (px[3 * p] >= nx) px[3 * p] = nx - 0.5;
    }
    size_t envelope = (size_t)particles * ENVELOPE / 8 + 1;  /* an eighth of the particles are near each face */
    double *esend = malloc(envelope * sizeof(double)), *erecv = malloc(6 * envelope * 8 * sizeof(double) + 8);
    long *their = calloc(6, sizeof(long));
    MPI_Request requests[12];
    /* tell each neighbour how large our envelope messages are */
    long mine_envelope = (long)envelope;
    for (int f = 0; f < 6; f++) {
        MPI_Request pair[2];
        MPI_Irecv(&their[f], 1, MPI_LONG, neighbour[f], 100 + (f ^ 1), MPI_COMM_WORLD, &pair[0]);
        MPI_Isend(&mine_envelope, 1, MPI_LONG, neighbour[f], 100 + f, MPI_COMM_WORLD, &pair[1]);
        MPI_Waitall(2, pair, MPI_STATUSES_IGNORE);
    }
    size_t erecv_total = 0;
    for (int f = 0; f < 6; f++) erecv_total += neighbour[f] == MPI_PROC_NULL ? 0 : (size_t)their[f];
    erecv = realloc(erecv, (erecv_total + 1) * sizeof(double));
    for (size_t i = 0; i < envelope; i++) esend[i] = 0.5;
    MPI_Barrier(MPI_COMM_WORLD);
    stop(SETUP, setup);

    double residual = 0;
    stamp loop = start();
    for (int it = 0; it < iterations; it++) {
        stamp s = start();
        double local = 0;
        for (int k = 1; k <= nz; k++)
            for (int j = 1; j <= ny; j++)
                for (int i = 1; i <= nx; i++) {
                    double value = (AT(u, i - 1, j, k) + AT(u, i + 1, j, k) + AT(u, i, j - 1, k) + AT(u, i, j + 1, k)
                                    + AT(u, i, j, k - 1) + AT(u, i, j, k + 1)) / 6.0;
                    local += fabs(value - AT(u, i, j, k));
                    AT(v, i, j, k) = value;
                }
        double *t = u; u = v; v = t;
        stop(STENCIL, s);

        s = start();
        for (int f = 0; f < 6; f++) {
            requests[f] = requests[6 + f] = MPI_REQUEST_NULL;
            if (neighbour[f] == MPI_PROC_NULL) continue;  /* the domain's edge: nothing to exchange */
            int axis = f / 2, layer = f % 2 ? (axis == 0 ? nx : axis == 1 ? ny : nz) : 1;
            size_t n = 0;
            for (int field = 0; field < FIELDS; field++) {
                if (axis == 0) for (int k = 1; k <= nz; k++) for (int j = 1; j <= ny; j++) sendbuf[f][n++] = AT(u, layer, j, k) + field;
                if (axis == 1) for (int k = 1; k <= nz; k++) for (int i = 1; i <= nx; i++) sendbuf[f][n++] = AT(u, i, layer, k) + field;
                if (axis == 2) for (int j = 1; j <= ny; j++) for (int i = 1; i <= nx; i++) sendbuf[f][n++] = AT(u, i, j, layer) + field;
            }
            MPI_Irecv(recvbuf[f], (int)n, MPI_DOUBLE, neighbour[f], f ^ 1, MPI_COMM_WORLD, &requests[f]);
            MPI_Isend(sendbuf[f], (int)n, MPI_DOUBLE, neighbour[f], f, MPI_COMM_WORLD, &requests[6 + f]);
        }
        stop(HALO, s);
        s = start();
        wait_all(12, requests);
        stop(HALO_WAIT, s);
        s = start();
        for (int f = 0; f < 6; f++) {
            if (neighbour[f] == MPI_PROC_NULL) continue;
            int axis = f / 2, ghost = f % 2 ? (axis == 0 ? nx + 1 : axis == 1 ? ny + 1 : nz + 1) : 0;
            size_t n = 0;
            for (int field = 0; field < FIELDS; field++) {
                double w = field == 0 ? 1.0 : 0.0;
                if (axis == 0) for (int k = 1; k <= nz; k++) for (int j = 1; j <= ny; j++) { double x = recvbuf[f][n++]; if (w) AT(u, ghost, j, k) = x; }
                if (axis == 1) for (int k = 1; k <= nz; k++) for (int i = 1; i <= nx; i++) { double x = recvbuf[f][n++]; if (w) AT(u, i, ghost, k) = x; }
                if (axis == 2) for (int j = 1; j <= ny; j++) for (int i = 1; i <= nx; i++) { double x = recvbuf[f][n++]; if (w) AT(u, i, j, ghost) = x; }
            }
        }
        stop(HALO, s);

        s = start();
        for (long p = 0; p < particles; p++) {
            double *q = &px[3 * p];
            int i = (int)q[0], j = (int)q[1], k = (int)q[2];
            double fx = q[0] - i, fy = q[1] - j, fz = q[2] - k, value = 0;
            for (int c = 0; c < 8; c++) {
                double weight = (c & 1 ? fx : 1 - fx) * (c & 2 ? fy : 1 - fy) * (c & 4 ? fz : 1 - fz);
                value += weight * AT(u, i + (c & 1), j + (c & 2 ? 1 : 0), k + (c & 4 ? 1 : 0));
            }
            /* the particle's own mechanics: MEMBRANE springs relaxed one after the other (compute-bound) */
            for (int m = 0; m < MEMBRANE; m++) {
                double stretch = 1.0 + 0.01 * ((m * 7 + p) % 13) * value;
                value += 1e-3 * (sqrt(stretch * stretch + 1e-3) - stretch);
            }
            for (int d = 0; d < 3; d++) {
                double limit = d == 0 ? nx : d == 1 ? ny : nz;
                q[d] += 0.001 * (value - 0.5) * (d + 1);
                if (q[d] < 1) q[d] = 2 - q[d];
                if (q[d] >= limit) q[d] = 2 * limit - q[d] - 1e-9;
                if (q[d] < 1 || q[d] >= limit) q[d] = 1 + 0.5 * (limit - 1);
            }
            esend[(p * ENVELOPE) % envelope] += 1e-9 * value;
        }
        stop(PARTICLES, s);

        s = start();
        size_t offset = 0;
        for (int f = 0; f < 6; f++) {
            requests[f] = requests[6 + f] = MPI_REQUEST_NULL;
            if (neighbour[f] == MPI_PROC_NULL) continue;
            for (size_t i = 0; i < envelope; i++)  /* pack the envelope for this neighbour */
                esend[i] = 0.999 * esend[i] + 1e-12 * (double)(i % 97);
            MPI_Irecv(erecv + offset, (int)their[f], MPI_DOUBLE, neighbour[f], 200 + (f ^ 1), MPI_COMM_WORLD,
                      &requests[f]);
            MPI_Isend(esend, (int)envelope, MPI_DOUBLE, neighbour[f], 200 + f, MPI_COMM_WORLD, &requests[6 + f]);
            offset += (size_t)their[f];
        }
        stop(PSYNC, s);
        s = start();
        wait_all(12, requests);
        stop(PSYNC_WAIT, s);
        residual += 1e-12 * erecv[0];

        s = start();
        double global;
        MPI_Request request;
        MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
        wait_all(1, &request);
        residual += global;
        stop(ALLREDUCE, s);
    }
    stop(LOOP, loop);

    double mine[2 * SECTIONS + 9] = {rank, coords[0], coords[1], coords[2], nx, ny, nz, (double)particles, neighbours};
    for (int s = 0; s < SECTIONS; s++) { mine[9 + 2 * s] = wall[s]; mine[10 + 2 * s] = cpu[s]; }
    int width = 2 * SECTIONS + 9;
    double *all = rank == 0 ? malloc((size_t)size * width * sizeof(double)) : NULL;
    MPI_Gather(mine, width, MPI_DOUBLE, all, width, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("rank,ix,iy,iz,nx,ny,nz,particles,neighbours");
        for (int s = 0; s < SECTIONS; s++) printf(",%s_wall,%s_cpu", NAMES[s], NAMES[s]);
        printf("\n");
        for (int r = 0; r < size; r++) {
            for (int c = 0; c < width; c++) printf(c ? ",%.9g" : "%.9g", all[r * width + c]);
            printf("\n");
        }
        fprintf(stderr, "residual %g\n", residual);
    }
    MPI_Finalize();
    return 0;
}

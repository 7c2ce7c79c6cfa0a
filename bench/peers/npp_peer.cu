// npp_peer: the NVIDIA NPP peer of `ndconv bench` (driven by npp_peer.py).
//
// Build (CUDA 12.x or 13.x; NPP's filters live in libnppif, its core in
// libnppc; the conversions here are own kernels, so no other NPP library):
//
//   nvcc -O3 -std=c++17 -o bench/peers/npp_peer bench/peers/npp_peer.cu -lnppif -lnppc
//
// (add -I$CUDA_HOME/include -L$CUDA_HOME/lib64 where the toolkit is not on
// nvcc's default paths). Only the _Ctx entry points are used: CUDA 13 has
// dropped the others, and the NppStreamContext is filled by hand
// (nppGetStreamContext is deprecated since 12.9).
//
// Run:
//   npp_peer selftest
//       prints (one JSON line) NPP's kernel order and window offset for
//       nppiFilter, nppiFilter32f_8u, nppiFilterRow and nppiFilterColumn at
//       1, 3 and 4 channels and several mask sizes, found by comparing with
//       a CPU correlation on a small image. Every run does the same for its
//       own configuration before timing anything.
//   npp_peer in=SRC.raw kernels=K.raw dtype=u8|f32 out=u8|f32 hp=ROWS wp=COLS
//            c=1|3|4 kh=KH kw=KW bank=B sep=0|1 repeats=N warmup=N rounds=R
//            transfers=0|1 [dump=OUT.raw]
//       SRC.raw is the source already padded so that the wanted output is
//       the 'valid' correlation of it: hp x wp x c elements, C order. The
//       output is (hp-kh+1) x (wp-kw+1) x c per bank kernel. NPP runs over
//       the whole padded image (ROI = hp x wp) and the outputs whose window
//       leaves it are dropped: NPP 13's filters specialised for 3x3 and 5x5
//       masks were seen to differ from the generic ones past the ROI.
//       K.raw holds float32 kernels in correlation order: bank x kh x kw
//       (sep=0), or per bank the kh column factor then the kw row factor
//       (sep=1). Prints one JSON line: ok, device, times_ms (each repeat of
//       `rounds` executions, CUDA events), checksum (float64 sum of the
//       outputs as stored), note. dump= writes the outputs (bank-major).
//
// Paths (each repeat is timed whole; nothing is allocated inside it):
//   f32 -> f32  nppiFilter_32f_CnR            | FilterRow_32f + FilterColumn_32f
//   u8  -> u8   nppiFilter32f_8u_CnR (NPP's   | u8->f32, Row_32f, Column_32f,
//               own rounding of the 8u result)|   f32->u8 (half even, saturate)
//   u8  -> f32  u8->f32, then the f32 path
//   f32 -> u8   the f32 path, then f32->u8 (round half to even, saturate)
// The u8<->f32 conversions are small kernels of this file (timed).

#include <cuda_runtime.h>
#include <npp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

// ---------------------------------------------------------------------------
// Errors and JSON
// ---------------------------------------------------------------------------

static std::string jesc(const std::string &s) {
    std::string o;
    for (char ch : s) {
        if (ch == '"' || ch == '\\') { o += '\\'; o += ch; }
        else if ((unsigned char)ch < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", ch); o += b; }
        else o += ch;
    }
    return o;
}

[[noreturn]] static void fail(const std::string &msg) {
    printf("{\"ok\":false,\"error\":\"%s\"}\n", jesc(msg).c_str());
    fflush(stdout);
    exit(2);
}

#define CK(call)                                                                          \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            if (e_ == cudaErrorMemoryAllocation) fail("out of memory on the device");     \
            fail(std::string(#call) + ": " + cudaGetErrorString(e_));                     \
        }                                                                                 \
    } while (0)

#define NK(call)                                                                          \
    do {                                                                                  \
        NppStatus s_ = (call);                                                            \
        if (s_ < 0) fail(std::string(#call) + ": NppStatus " + std::to_string((int)s_));  \
    } while (0)

// ---------------------------------------------------------------------------
// Stream context (filled by hand)
// ---------------------------------------------------------------------------

static NppStreamContext make_ctx(cudaStream_t stream) {
    NppStreamContext c;
    memset(&c, 0, sizeof c);
    int dev = 0;
    CK(cudaGetDevice(&dev));
    c.hStream = stream;
    c.nCudaDeviceId = dev;
    int v = 0;
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev)); c.nMultiProcessorCount = v;
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerMultiProcessor, dev)); c.nMaxThreadsPerMultiProcessor = v;
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, dev)); c.nMaxThreadsPerBlock = v;
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlock, dev)); c.nSharedMemPerBlock = (size_t)v;
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, dev)); c.nCudaDevAttrComputeCapabilityMajor = v;
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMinor, dev)); c.nCudaDevAttrComputeCapabilityMinor = v;
    unsigned int flags = 0;
    CK(cudaStreamGetFlags(stream, &flags));
    c.nStreamFlags = flags;
    return c;
}

// ---------------------------------------------------------------------------
// Pitched device images with a margin all round (so that no NPP read of a
// wrong convention during the self-test leaves the allocation).
// ---------------------------------------------------------------------------

struct Img {
    unsigned char *base = nullptr;  // allocation
    size_t pitch = 0;               // bytes per row
    int rows = 0, cols = 0, ch = 1, esize = 4;
    int mrows = 0, mcols = 0;       // margin in rows / pixels
    unsigned char *at(int r, int c) const {  // pixel (r, c) of the image proper
        return base + (size_t)(r + mrows) * pitch + (size_t)(c + mcols) * ch * esize;
    }
    unsigned char *data() const { return at(0, 0); }
    size_t row_bytes() const { return (size_t)cols * ch * esize; }
};

static Img alloc_img(int rows, int cols, int ch, int esize, int mrows, int mcols) {
    Img m;
    m.rows = rows; m.cols = cols; m.ch = ch; m.esize = esize; m.mrows = mrows; m.mcols = mcols;
    size_t wbytes = (size_t)(cols + 2 * mcols) * ch * esize;
    CK(cudaMallocPitch((void **)&m.base, &m.pitch, wbytes, rows + 2 * mrows));
    CK(cudaMemset2D(m.base, m.pitch, 0, wbytes, rows + 2 * mrows));
    CK(cudaDeviceSynchronize());
    return m;
}

static void free_img(Img &m) {
    if (m.base) cudaFree(m.base);
    m.base = nullptr;
}

// ---------------------------------------------------------------------------
// Conversion kernels (u8 <-> f32 over pitched images; width in elements)
// ---------------------------------------------------------------------------

__global__ void k_u8_to_f32(const unsigned char *s, size_t sp, float *d, size_t dp, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w) return;
    for (int y = blockIdx.y; y < h; y += gridDim.y)
        ((float *)((char *)d + y * dp))[x] = (float)s[y * sp + x];
}

__global__ void k_f32_to_u8(const float *s, size_t sp, unsigned char *d, size_t dp, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w) return;
    for (int y = blockIdx.y; y < h; y += gridDim.y) {
        float v = ((const float *)((const char *)s + y * sp))[x];
        v = rintf(v);  // round half to even (default rounding mode)
        v = fminf(fmaxf(v, 0.0f), 255.0f);
        if (v != v) v = 0.0f;
        d[y * dp + x] = (unsigned char)v;
    }
}

static void u8_to_f32(const Img &s, const Img &d, cudaStream_t st) {
    int w = s.cols * s.ch;
    dim3 b(256), g((w + 255) / 256, std::min(s.rows, 65535));
    k_u8_to_f32<<<g, b, 0, st>>>(s.data(), s.pitch, (float *)d.data(), d.pitch, w, s.rows);
    CK(cudaGetLastError());
}

static void f32_to_u8(const Img &s, const Img &d, cudaStream_t st) {
    int w = s.cols * s.ch;
    dim3 b(256), g((w + 255) / 256, std::min(s.rows, 65535));
    k_f32_to_u8<<<g, b, 0, st>>>((const float *)s.data(), s.pitch, d.data(), d.pitch, w, s.rows);
    CK(cudaGetLastError());
}

// ---------------------------------------------------------------------------
// NPP calls by channel count
// ---------------------------------------------------------------------------

static NppStatus filter2d_f32(int C, const Npp32f *s, int ss, Npp32f *d, int ds, NppiSize roi,
                              const Npp32f *k, NppiSize ks, NppiPoint a, NppStreamContext ctx) {
    switch (C) {
    case 1: return nppiFilter_32f_C1R_Ctx(s, ss, d, ds, roi, k, ks, a, ctx);
    case 3: return nppiFilter_32f_C3R_Ctx(s, ss, d, ds, roi, k, ks, a, ctx);
    case 4: return nppiFilter_32f_C4R_Ctx(s, ss, d, ds, roi, k, ks, a, ctx);
    }
    return NPP_NOT_SUPPORTED_MODE_ERROR;
}

static NppStatus filter2d_8u(int C, const Npp8u *s, int ss, Npp8u *d, int ds, NppiSize roi,
                             const Npp32f *k, NppiSize ks, NppiPoint a, NppStreamContext ctx) {
    switch (C) {
    case 1: return nppiFilter32f_8u_C1R_Ctx(s, ss, d, ds, roi, k, ks, a, ctx);
    case 3: return nppiFilter32f_8u_C3R_Ctx(s, ss, d, ds, roi, k, ks, a, ctx);
    case 4: return nppiFilter32f_8u_C4R_Ctx(s, ss, d, ds, roi, k, ks, a, ctx);
    }
    return NPP_NOT_SUPPORTED_MODE_ERROR;
}

static NppStatus filter_row(int C, const Npp32f *s, int ss, Npp32f *d, int ds, NppiSize roi,
                            const Npp32f *k, int n, int a, NppStreamContext ctx) {
    switch (C) {
    case 1: return nppiFilterRow_32f_C1R_Ctx(s, ss, d, ds, roi, k, n, a, ctx);
    case 3: return nppiFilterRow_32f_C3R_Ctx(s, ss, d, ds, roi, k, n, a, ctx);
    case 4: return nppiFilterRow_32f_C4R_Ctx(s, ss, d, ds, roi, k, n, a, ctx);
    }
    return NPP_NOT_SUPPORTED_MODE_ERROR;
}

static NppStatus filter_col(int C, const Npp32f *s, int ss, Npp32f *d, int ds, NppiSize roi,
                            const Npp32f *k, int n, int a, NppStreamContext ctx) {
    switch (C) {
    case 1: return nppiFilterColumn_32f_C1R_Ctx(s, ss, d, ds, roi, k, n, a, ctx);
    case 3: return nppiFilterColumn_32f_C3R_Ctx(s, ss, d, ds, roi, k, n, a, ctx);
    case 4: return nppiFilterColumn_32f_C4R_Ctx(s, ss, d, ds, roi, k, n, a, ctx);
    }
    return NPP_NOT_SUPPORTED_MODE_ERROR;
}

// ---------------------------------------------------------------------------
// Conventions. NPP's filters convolve (the kernel is applied mirrored) and
// place the window by an anchor; and NPP 13's size-specialised filters (seen
// for 3x3 and 5x5 masks on one channel) do not read past the ROI the way the
// generic ones do. So every call here runs over the whole padded source (ROI
// = padded image, anchor k/2) and only the outputs whose window lies inside
// it are used. For each call configuration (function, channels, mask size)
// a self-test on a small image finds whether the kernel must be passed
// reversed and at which offset (cy, cx) in NPP's output the wanted 'valid'
// correlation out(o) = sum_t P(o + t) K[t] starts.
// ---------------------------------------------------------------------------

enum Kind { FULL_F32, FULL_8U, ROW_F32, COL_F32 };

struct Conv {
    bool found = false;
    bool rev = true;  // pass the kernel reversed
    int cy = 0, cx = 0;
    std::string why;
};

static std::vector<float> reversed(const float *k, int n) {
    std::vector<float> r(k, k + n);
    std::reverse(r.begin(), r.end());
    return r;
}

// One NPP call of the given kind over an image of roi (width, height).
static NppStatus call_npp(Kind kind, int C, const void *src, int ss, void *dst, int ds, NppiSize roi,
                          const Npp32f *k, int kh, int kw, NppStreamContext ctx) {
    NppiSize ks = {kw, kh};
    NppiPoint an = {kw / 2, kh / 2};
    switch (kind) {
    case FULL_F32: return filter2d_f32(C, (const Npp32f *)src, ss, (Npp32f *)dst, ds, roi, k, ks, an, ctx);
    case FULL_8U: return filter2d_8u(C, (const Npp8u *)src, ss, (Npp8u *)dst, ds, roi, k, ks, an, ctx);
    case ROW_F32: return filter_row(C, (const Npp32f *)src, ss, (Npp32f *)dst, ds, roi, k, kw, kw / 2, ctx);
    case COL_F32: return filter_col(C, (const Npp32f *)src, ss, (Npp32f *)dst, ds, roi, k, kh, kh / 2, ctx);
    }
    return NPP_NOT_SUPPORTED_MODE_ERROR;
}

// kh = 1 for ROW_F32, kw = 1 for COL_F32.
static Conv calibrate(Kind kind, int C, int kh, int kw, NppStreamContext ctx) {
    Conv cv;
    const bool in8 = kind == FULL_8U;
    const int es = in8 ? 1 : 4;
    const int H = kh + 9, W = kw + 11, OH = H - kh + 1, OW = W - kw + 1;
    const int n = H * W * C, nk = kh * kw;
    std::vector<float> Pf(n), K(nk);
    std::vector<unsigned char> P8(n);
    for (int i = 0; i < n; i++) {
        P8[i] = (unsigned char)((i * 7919) % 251);
        Pf[i] = in8 ? (float)P8[i] : (float)((i * 7919) % 1009) / 1009.0f;
    }
    double ks = 0;
    for (int j = 0; j < nk; j++) { K[j] = (float)(((j * 31 + 7) % 23) + 1); ks += K[j]; }
    for (int j = 0; j < nk; j++) K[j] = (float)(K[j] / ks);
    std::vector<double> ref((size_t)OH * OW * C, 0.0);
    for (int y = 0; y < OH; y++)
        for (int x = 0; x < OW; x++)
            for (int c = 0; c < C; c++) {
                double r = 0;
                for (int i = 0; i < kh; i++)
                    for (int j = 0; j < kw; j++) r += (double)Pf[((size_t)(y + i) * W + x + j) * C + c] * K[i * kw + j];
                ref[((size_t)y * OW + x) * C + c] = r;
            }
    Img src = alloc_img(H, W, C, es, kh, kw), dst = alloc_img(H, W, C, es, 0, 0);
    CK(cudaMemcpy2D(src.data(), src.pitch, in8 ? (const void *)P8.data() : (const void *)Pf.data(), (size_t)W * C * es,
                    (size_t)W * C * es, H, cudaMemcpyHostToDevice));
    float *dk = nullptr;
    CK(cudaMalloc(&dk, nk * sizeof(float)));
    std::vector<unsigned char> raw((size_t)n * es);
    std::vector<float> got(n);
    const double tol = in8 ? 1.0 : 1e-4;  // 8u: NPP truncates
    for (int rev = 1; rev >= 0 && !cv.found; rev--) {
        std::vector<float> kk = rev ? reversed(K.data(), nk) : K;
        CK(cudaMemcpy(dk, kk.data(), nk * sizeof(float), cudaMemcpyHostToDevice));
        CK(cudaMemset2D(dst.base, dst.pitch, 0, dst.row_bytes(), H));
        CK(cudaDeviceSynchronize());
        NppStatus s = call_npp(kind, C, src.data(), (int)src.pitch, dst.data(), (int)dst.pitch, NppiSize{W, H}, dk, kh, kw, ctx);
        CK(cudaDeviceSynchronize());
        if (s < 0) { cv.why = "NppStatus " + std::to_string((int)s); continue; }
        CK(cudaMemcpy2D(raw.data(), (size_t)W * C * es, dst.data(), dst.pitch, (size_t)W * C * es, H, cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++) got[i] = in8 ? (float)raw[i] : ((const float *)raw.data())[i];
        for (int cy = 0; cy < kh && !cv.found; cy++)
            for (int cx = 0; cx < kw && !cv.found; cx++) {
                bool ok = true;
                for (int y = 0; y < OH && ok; y++)
                    for (int x = 0; x < OW && ok; x++)
                        for (int c = 0; c < C && ok; c++)
                            ok = std::fabs(got[((size_t)(y + cy) * W + x + cx) * C + c] - ref[((size_t)y * OW + x) * C + c]) <= tol;
                if (ok) { cv.found = true; cv.rev = rev; cv.cy = cy; cv.cx = cx; }
            }
        if (!cv.found) cv.why = "no offset matched a CPU correlation";
    }
    cudaFree(dk);
    free_img(src);
    free_img(dst);
    return cv;
}

static std::string conv_str(const Conv &c) {
    if (!c.found) return "no convention matched (" + c.why + ")";
    return std::string(c.rev ? "kernel reversed" : "kernel as is") + ", window offset (" + std::to_string(c.cy) + "," +
           std::to_string(c.cx) + ")";
}

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

struct Args {
    std::map<std::string, std::string> kv;
    std::string s(const char *k, const char *def = nullptr) const {
        auto it = kv.find(k);
        if (it == kv.end()) {
            if (!def) fail(std::string("missing argument ") + k + "=");
            return def;
        }
        return it->second;
    }
    long i(const char *k, const char *def = nullptr) const { return strtol(s(k, def).c_str(), nullptr, 10); }
};

static std::vector<char> read_file(const std::string &path, size_t want) {
    FILE *f = fopen(path.c_str(), "rb");
    if (!f) fail("cannot open " + path);
    std::vector<char> b(want);
    size_t n = want ? fread(b.data(), 1, want, f) : 0;
    fclose(f);
    if (n != want) fail("short file " + path + ": want " + std::to_string(want) + " bytes");
    return b;
}

// ---------------------------------------------------------------------------

int main(int argc, char **argv) {
    Args a;
    bool selftest = false;
    for (int i = 1; i < argc; i++) {
        std::string t = argv[i];
        if (t == "selftest") { selftest = true; continue; }
        size_t e = t.find('=');
        if (e == std::string::npos) fail("bad argument " + t);
        a.kv[t.substr(0, e)] = t.substr(e + 1);
    }
    CK(cudaSetDevice(0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::string device = prop.name;
    // A blocking stream: ordered with the legacy default stream, on which
    // the (untimed) memsets and synchronous copies of the setup run.
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    NppStreamContext ctx = make_ctx(st);
    const NppLibraryVersion *lv = nppGetLibVersion();
    char ver[64];
    snprintf(ver, sizeof ver, "NPP %d.%d.%d", lv->major, lv->minor, lv->build);

    if (selftest) {
        // The conventions for a spread of configurations (diagnostic).
        bool all = true;
        std::string out;
        const int sizes[][2] = {{3, 3}, {5, 5}, {7, 7}, {4, 6}, {5, 3}, {31, 31}};
        for (int C : {1, 3, 4}) {
            for (auto &sz : sizes) {
                for (Kind k : {FULL_F32, FULL_8U}) {
                    Conv c = calibrate(k, C, sz[0], sz[1], ctx);
                    all = all && c.found;
                    out += std::string(out.empty() ? "" : ",") + "\"" + (k == FULL_8U ? "filter32f_8u" : "filter_32f") + " C" +
                           std::to_string(C) + " " + std::to_string(sz[0]) + "x" + std::to_string(sz[1]) + "\":\"" +
                           jesc(conv_str(c)) + "\"";
                }
            }
            for (int m : {3, 4, 5, 7, 31}) {
                Conv r = calibrate(ROW_F32, C, 1, m, ctx), c = calibrate(COL_F32, C, m, 1, ctx);
                all = all && r.found && c.found;
                out += ",\"row C" + std::to_string(C) + " " + std::to_string(m) + "\":\"" + jesc(conv_str(r)) + "\"";
                out += ",\"column C" + std::to_string(C) + " " + std::to_string(m) + "\":\"" + jesc(conv_str(c)) + "\"";
            }
        }
        printf("{\"ok\":%s,\"device\":\"%s\",\"npp\":\"%s\",%s}\n", all ? "true" : "false", jesc(device).c_str(), ver, out.c_str());
        return 0;
    }

    const bool in8 = a.s("dtype") == "u8", out8 = a.s("out") == "u8";
    if (!in8 && a.s("dtype") != "f32") fail("dtype must be u8 or f32");
    if (!out8 && a.s("out") != "f32") fail("out must be u8 or f32");
    const int HP = (int)a.i("hp"), WP = (int)a.i("wp"), C = (int)a.i("c");
    const int KH = (int)a.i("kh"), KW = (int)a.i("kw"), B = (int)a.i("bank", "1");
    const bool sep = a.i("sep", "0") != 0, transfers = a.i("transfers", "0") != 0;
    const int repeats = (int)a.i("repeats", "11"), warmup = (int)a.i("warmup", "2"), rounds = (int)a.i("rounds", "1");
    const std::string dump = a.s("dump", "");
    if (C != 1 && C != 3 && C != 4) fail("NPP filters take 1, 3 or 4 channels");
    const int OH = HP - KH + 1, OW = WP - KW + 1;
    if (OH <= 0 || OW <= 0 || B < 1) fail("bad sizes");

    // Paths: every one but the full u8->u8 filter works in f32.
    const bool need_f32_src = !in8 || sep || !out8;
    const bool via_f32_out = out8 && need_f32_src;
    Conv cf, cc;  // full (or row) and column conventions for this configuration
    if (!sep) {
        cf = calibrate(in8 && out8 ? FULL_8U : FULL_F32, C, KH, KW, ctx);
    } else {
        cf = calibrate(ROW_F32, C, 1, KW, ctx);
        cc = calibrate(COL_F32, C, KH, 1, ctx);
    }
    if (!cf.found || (sep && !cc.found))
        fail("NPP self-test for this configuration failed: " + conv_str(cf) + (sep ? "; column " + conv_str(cc) : ""));

    // Host data (pinned).
    const int ies = in8 ? 1 : 4, oes = out8 ? 1 : 4;
    const size_t in_bytes = (size_t)HP * WP * C * ies;
    std::vector<char> raw = read_file(a.s("in"), in_bytes);
    size_t nk = sep ? (size_t)B * (KH + KW) : (size_t)B * KH * KW;
    std::vector<char> kraw = read_file(a.s("kernels"), nk * 4);
    const float *kf = (const float *)kraw.data();
    unsigned char *h_in = nullptr;
    CK(cudaMallocHost((void **)&h_in, in_bytes));
    memcpy(h_in, raw.data(), in_bytes);
    std::vector<char>().swap(raw);
    const size_t out_row = (size_t)OW * C * oes, out_bytes = out_row * OH;
    std::vector<unsigned char *> h_out(B, nullptr);
    for (int b = 0; b < B; b++) CK(cudaMallocHost((void **)&h_out[b], out_bytes));

    // Kernels on the device, in the order NPP wants.
    std::vector<float> kdev_h;
    for (int b = 0; b < B; b++) {
        if (!sep) {
            const float *k = kf + (size_t)b * KH * KW;
            std::vector<float> v = cf.rev ? reversed(k, KH * KW) : std::vector<float>(k, k + KH * KW);
            kdev_h.insert(kdev_h.end(), v.begin(), v.end());
        } else {
            const float *kc = kf + (size_t)b * (KH + KW), *kr = kc + KH;
            std::vector<float> vc = cc.rev ? reversed(kc, KH) : std::vector<float>(kc, kc + KH);
            std::vector<float> vr = cf.rev ? reversed(kr, KW) : std::vector<float>(kr, kr + KW);
            kdev_h.insert(kdev_h.end(), vc.begin(), vc.end());
            kdev_h.insert(kdev_h.end(), vr.begin(), vr.end());
        }
    }
    float *d_k = nullptr;
    CK(cudaMalloc(&d_k, kdev_h.size() * sizeof(float)));
    CK(cudaMemcpy(d_k, kdev_h.data(), kdev_h.size() * sizeof(float), cudaMemcpyHostToDevice));

    // Device images. The source keeps a kernel-sized margin so that NPP's
    // reads past the padded image stay inside the allocation. NPP's output
    // covers the whole padded image (full) or all its rows (separable); the
    // wanted part starts at (vy, vx).
    Img src = alloc_img(HP, WP, C, ies, KH, KW);
    Img srcf;
    if (in8 && need_f32_src) srcf = alloc_img(HP, WP, C, 4, KH, KW);
    const Img &fsrc = in8 ? srcf : src;
    Img tmp;
    if (sep) tmp = alloc_img(HP, WP, C, 4, KH, KW);
    const int RW = sep ? OW : WP;  // output buffer width
    const int vy = sep ? cc.cy : cf.cy, vx = sep ? 0 : cf.cx;
    std::vector<Img> out(B), outf(B);
    for (int b = 0; b < B; b++) {
        out[b] = alloc_img(HP, RW, C, oes, 0, 0);
        if (via_f32_out) outf[b] = alloc_img(HP, RW, C, 4, 0, 0);
    }

    std::string note;
    auto add = [&](const std::string &t) { note += (note.empty() ? "" : "; ") + t; };
    if (!sep && in8 && out8)
        add("nppiFilter32f_8u: float kernel, the 8u result converted by NPP's own rule (NPP 13.0 was seen to truncate: "
            "about 0.5 per element below round half even)");
    if (in8 && need_f32_src) add("u8 input converted to f32 first (timed)");
    if (via_f32_out) add("f32 result converted to u8 (round half even, saturate; timed)");
    if (sep) add("f32 intermediate between the row and column passes");
    add("NPP filters the whole padded image (ROI = padded source; " + std::to_string(HP) + "x" + std::to_string(WP) +
        " for " + std::to_string(OH) + "x" + std::to_string(OW) + " outputs), the outputs whose window leaves it unused");
    add(std::string(ver) + ": " + (sep ? ("row " + conv_str(cf) + ", column " + conv_str(cc)) : conv_str(cf)));

    auto upload = [&]() {
        CK(cudaMemcpy2DAsync(src.data(), src.pitch, h_in, (size_t)WP * C * ies, (size_t)WP * C * ies, HP,
                             cudaMemcpyHostToDevice, st));
    };
    auto download = [&]() {
        for (int b = 0; b < B; b++)
            CK(cudaMemcpy2DAsync(h_out[b], out_row, out[b].at(vy, vx), out[b].pitch, out_row, OH, cudaMemcpyDeviceToHost, st));
    };
    auto execute = [&]() {
        if (in8 && need_f32_src) u8_to_f32(src, srcf, st);
        for (int b = 0; b < B; b++) {
            const Img &dst = via_f32_out ? outf[b] : out[b];
            if (!sep) {
                const float *k = d_k + (size_t)b * KH * KW;
                const Img &from = (in8 && out8) ? src : fsrc;
                NK(call_npp(in8 && out8 ? FULL_8U : FULL_F32, C, from.data(), (int)from.pitch, dst.data(), (int)dst.pitch,
                            NppiSize{WP, HP}, k, KH, KW, ctx));
            } else {
                const float *kc = d_k + (size_t)b * (KH + KW), *kr = kc + KH;
                NK(call_npp(ROW_F32, C, fsrc.data(), (int)fsrc.pitch, tmp.data(), (int)tmp.pitch, NppiSize{WP, HP}, kr, 1,
                            KW, ctx));
                NK(call_npp(COL_F32, C, tmp.at(0, cf.cx), (int)tmp.pitch, dst.data(), (int)dst.pitch, NppiSize{OW, HP}, kc,
                            KH, 1, ctx));
            }
            if (via_f32_out) f32_to_u8(outf[b], out[b], st);
        }
    };
    auto one_round = [&]() {
        if (transfers) upload();
        execute();
        if (transfers) download();
    };

    CK(cudaDeviceSynchronize());
    if (!transfers) {
        upload();
        CK(cudaStreamSynchronize(st));
    }
    for (int w = 0; w < warmup; w++)
        for (int r = 0; r < rounds; r++) one_round();
    CK(cudaStreamSynchronize(st));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> times;
    for (int rep = 0; rep < repeats; rep++) {
        CK(cudaEventRecord(e0, st));
        for (int r = 0; r < rounds; r++) one_round();
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        times.push_back(ms);
    }
    if (!transfers) download();
    CK(cudaStreamSynchronize(st));

    double sum = 0;
    for (int b = 0; b < B; b++) {
        if (out8) {
            const unsigned char *p = h_out[b];
            for (size_t i = 0; i < out_bytes; i++) sum += p[i];
        } else {
            const float *p = (const float *)h_out[b];
            for (size_t i = 0; i < out_bytes / 4; i++) sum += p[i];
        }
    }
    if (!dump.empty()) {
        FILE *f = fopen(dump.c_str(), "wb");
        if (!f) fail("cannot write " + dump);
        for (int b = 0; b < B; b++) fwrite(h_out[b], 1, out_bytes, f);
        fclose(f);
    }

    printf("{\"ok\":true,\"device\":\"%s\",\"times_ms\":[", jesc(device).c_str());
    for (size_t i = 0; i < times.size(); i++) printf("%s%.6f", i ? "," : "", times[i]);
    printf("],\"checksum\":%.17g,\"note\":\"%s\"}\n", sum, jesc(note).c_str());
    fflush(stdout);

    for (int b = 0; b < B; b++) { free_img(out[b]); free_img(outf[b]); cudaFreeHost(h_out[b]); }
    free_img(src); free_img(srcf); free_img(tmp);
    cudaFree(d_k);
    cudaFreeHost(h_in);
    cudaStreamDestroy(st);
    return 0;
}

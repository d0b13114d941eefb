package io.jhca.benchmarks;

import jnr.ffi.LibraryLoader;

import java.util.Arrays;
import java.util.Locale;

import io.jhca.mlx5.Mlx5Provider;

/**
 * The Java/C ratio of the mlx5 data path measured in pairs: one process runs a 1000-operation block of the Java
 * benchmark ({@link Mlx5RingBenchmark#block} or {@link Mlx5VerbsBenchmark#block}), then the same block of its C
 * baseline (the baselines' loops built as a shared library and called through jnr-ffi; the C code times itself),
 * then again in the other order, some hundreds of times, and reports the median of the per-pair ratios. Both sides of
 * a pair run within a millisecond of each other, so a machine whose speed drifts with other work (a shared VM's
 * neighbours: the same C loop measured 12 ns one day and 18 the next) moves both alike, where the JMH run and the C
 * runs of {@code scripts/bench-mlx5-vs-c} are minutes apart. The C blocks run in this JVM's process on the same
 * thread; the call into C is outside its own timing.
 *
 * <p>Usage: {@code Mlx5PairedRun LIB PAIR BATCH [ROUNDS] [WARMUP_MS]}, PAIR one of {@code direct/bare}
 * ({@link Mlx5DirectBenchmark}), {@code bareLoop/bare} (the bare loop in Java, {@link Mlx5BareLoopBenchmark} with its
 * parameters read at run time, against the same loop in C), {@code ring/bare}, {@code ring/bare-wrid},
 * {@code builder/rdma-core}, {@code postSend/rdma-core}, {@code postRecv/rdma-core} (the receive side,
 * {@link Mlx5RecvBenchmark}), {@code srqRecv/rdma-core} (the same into an SRQ); one configuration per JVM, as JMH
 * forks one per parameter set. Prints one line: {@code pair=... batch=... java_ns=... c_ns=... ratio=... q1=...
 * q3=... rounds=... checksum=... chain_apart=...} (ns per operation: the median blocks'; ratio: the median of the
 * per-pair ratios, q1 and q3 its quartiles; chain_apart: whether postSend's chain loop was compiled apart from its
 * callers, {@code Mlx5Provider.chainCompiledApart}).
 */
public final class Mlx5PairedRun {

    /** The baselines' library (mlx5_bare_baseline.c, mlx5_verbs_baseline.c built with -DJHCA_BASELINE_LIB). */
    public interface Baselines {
        int bare_init(int batch, int keepWrid);

        double bare_run(long ops);

        long bare_checksum();

        /** mode 0: RDMA WRITEs by ibv_post_send, 1: by the builder, 2: receives by ibv_post_recv, 3: by ibv_post_srq_recv. */
        int verbs_init(int mode, int batch);

        double verbs_run(long ops);

        long verbs_checksum();
    }

    /** One side of a pair: runs one block and returns its time in ns. */
    private interface Side {
        double block();
    }

    private static long sink;

    private Mlx5PairedRun() {
    }

    public static void main(String[] args) {
        if (args.length < 3) {
            System.err.println("usage: Mlx5PairedRun LIB direct/bare|bareLoop/bare|ring/bare|ring/bare-wrid|builder/rdma-core"
                    + "|postSend/rdma-core|postRecv/rdma-core|srqRecv/rdma-core"
                    + " BATCH [ROUNDS] [WARMUP_MS]");
            System.exit(2);
        }
        Baselines c = LibraryLoader.create(Baselines.class).load(args[0]);
        String pair = args[1];
        int batch = Integer.parseInt(args[2]);
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 400;
        long warmupMillis = args.length > 4 ? Long.parseLong(args[4]) : 3000;
        Side javaSide;
        Side cSide;
        Runnable tearDown;
        switch (pair) {
            case "ring/bare":
            case "ring/bare-wrid":
            case "direct/bare":
            case "bareLoop/bare": {
                JavaLevel level = againstBareC(pair, batch);
                javaSide = () -> timed(level.block());
                check(c.bare_init(batch, pair.endsWith("wrid") ? 1 : 0), pair);
                cSide = () -> cBlock(c.bare_run(Mlx5RingBenchmark.BLOCK), pair);
                tearDown = level.tearDown();
                break;
            }
            case "builder/rdma-core":
            case "postSend/rdma-core": {
                Mlx5VerbsBenchmark verbs = new Mlx5VerbsBenchmark();
                verbs.batch = batch;
                verbs.api = pair.startsWith("builder") ? "builder" : "postSend";
                verbs.setUp();
                javaSide = () -> timed(verbs::block);
                check(c.verbs_init(pair.startsWith("builder") ? 1 : 0, batch), pair);
                cSide = () -> cBlock(c.verbs_run(Mlx5VerbsBenchmark.BLOCK), pair);
                tearDown = verbs::tearDown;
                break;
            }
            case "postRecv/rdma-core":
            case "srqRecv/rdma-core": {
                boolean srq = pair.startsWith("srq");
                Mlx5RecvBenchmark recv = new Mlx5RecvBenchmark();
                recv.batch = batch;
                recv.queue = srq ? "srq" : "qp";
                recv.setUp();
                javaSide = () -> timed(recv::block);
                check(c.verbs_init(srq ? 3 : 2, batch), pair);
                cSide = () -> cBlock(c.verbs_run(Mlx5RecvBenchmark.BLOCK), pair);
                tearDown = recv::tearDown;
                break;
            }
            default:
                throw new IllegalArgumentException("unknown pair " + pair);
        }
        long end = System.nanoTime() + warmupMillis * 1_000_000L;
        while (System.nanoTime() < end) {
            javaSide.block();
            cSide.block();
        }
        double[] javaNs = new double[rounds];
        double[] cNs = new double[rounds];
        double[] ratio = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            if ((r & 1) == 0) {   // alternate who goes first, so neither always follows the other's cache state
                javaNs[r] = javaSide.block();
                cNs[r] = cSide.block();
            } else {
                cNs[r] = cSide.block();
                javaNs[r] = javaSide.block();
            }
            ratio[r] = javaNs[r] / cNs[r];
        }
        tearDown.run();
        Arrays.sort(javaNs);
        Arrays.sort(cNs);
        Arrays.sort(ratio);
        double perOp = Mlx5RingBenchmark.BLOCK;
        System.out.println(String.format(Locale.ROOT,
                "pair=%s batch=%d java_ns=%.2f c_ns=%.2f ratio=%.3f q1=%.3f q3=%.3f rounds=%d checksum=%d chain_apart=%s",
                pair, batch, javaNs[rounds / 2] / perOp, cNs[rounds / 2] / perOp, ratio[rounds / 2],
                ratio[rounds / 4], ratio[rounds * 3 / 4], rounds,
                (sink + c.bare_checksum() + c.verbs_checksum()) & 0xff,
                Mlx5Provider.chainCompiledApart().equals("yes") ? "yes" : "no"));
    }

    private interface Block {
        long run();
    }

    /** The Java side of a pair: its block and its teardown. */
    private record JavaLevel(Block block, Runnable tearDown) {
    }

    /** The Java benchmark a pair with the bare C loop measures, set up for {@code batch}. */
    private static JavaLevel againstBareC(String pair, int batch) {
        switch (pair) {
            case "direct/bare": {
                Mlx5DirectBenchmark direct = new Mlx5DirectBenchmark();
                direct.batch = batch;
                direct.setUp();
                return new JavaLevel(direct::block, direct::tearDown);
            }
            case "bareLoop/bare": {
                Mlx5BareLoopBenchmark loop = new Mlx5BareLoopBenchmark();
                loop.batch = batch;
                loop.params = "runtime";
                loop.wrid = false;
                loop.setUp();
                return new JavaLevel(loop::block, loop::tearDown);
            }
            default: {   // ring/bare, ring/bare-wrid
                Mlx5RingBenchmark ring = new Mlx5RingBenchmark();
                ring.batch = batch;
                ring.opcode = "RDMA_WRITE";
                ring.writer = "oneCall";
                ring.setUp();
                return new JavaLevel(ring::block, ring::tearDown);
            }
        }
    }

    private static double timed(Block b) {
        long t0 = System.nanoTime();
        sink += b.run();
        return System.nanoTime() - t0;
    }

    private static double cBlock(double ns, String pair) {
        if (ns < 0) {
            throw new IllegalStateException(pair + ": the C loop failed (see its message above)");
        }
        return ns;
    }

    private static void check(int rc, String pair) {
        if (rc != 0) {
            throw new IllegalArgumentException(pair + ": the C baseline refused its setup (" + rc + ")");
        }
    }
}

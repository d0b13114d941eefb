package io.jhca.memory;

import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * Run in a child JVM by {@link ViewAfterCloseTest}: touches buffer views of regions that are closed (or being
 * closed). A crash on unmapped memory kills this JVM with SIGSEGV; the fixed behaviour is an exception, so the
 * probe prints what it saw and exits 0.
 */
public final class StaleViewProbe {

    private StaleViewProbe() {
    }

    public static void main(final String[] args) throws Exception {
        switch (args[0]) {
            case "after-close" -> afterClose();
            case "racing-close" -> racingClose(Long.parseLong(args[1]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    /** A view taken with buffer(offset, length), touched after close. */
    private static void afterClose() {
        final DmaRegion region = DmaMemory.allocate(1 << 20);
        final UnsafeBuffer view = region.buffer(4096, 4096);
        view.putLong(0, 1);
        region.close();
        try {
            System.out.println("READ " + view.getLong(0));
        } catch (final IndexOutOfBoundsException e) {
            System.out.println("REFUSED " + e.getClass().getSimpleName());
        }
    }

    /** Reader threads sweep views while the main thread closes the region under them. */
    private static void racingClose(final long seed) throws Exception {
        System.out.println("seed " + seed);
        final SplittableRandom random = new SplittableRandom(seed);
        final AtomicLong refused = new AtomicLong();
        for (int round = 0; round < 200; round++) {
            final DmaRegion region = DmaMemory.allocate(1 << 20);
            final UnsafeBuffer whole = region.buffer();
            final UnsafeBuffer part = region.buffer(65536, 65536);
            final CountDownLatch started = new CountDownLatch(2);
            final Thread[] readers = {reader(whole, started, refused), reader(part, started, refused)};
            started.await();
            // let the readers get going for a random while before pulling the memory away
            Thread.sleep(0, random.nextInt(1, 500_000));
            region.close();
            for (final Thread t : readers) {
                t.join();
            }
        }
        System.out.println("REFUSED " + refused.get());
    }

    private static Thread reader(final UnsafeBuffer view, final CountDownLatch started, final AtomicLong refused) {
        final Thread t = new Thread(() -> {
            started.countDown();
            long sum = 0;
            try {
                // bounded: a reader that never sees the close (no happens-before on the view's fields) still ends
                for (int pass = 0; pass < 2_000; pass++) {
                    for (int i = 0; i + 8 <= view.capacity(); i += 4096) {
                        sum += view.getLong(i);
                    }
                }
            } catch (final IndexOutOfBoundsException e) {
                refused.incrementAndGet();
            }
            if (sum == 42) {
                System.out.println("unlikely");
            }
        });
        t.start();
        return t;
    }
}

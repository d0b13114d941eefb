package io.jhca.mlx5.init;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.spi.Mlx5Function;

/**
 * The 4 KiB pages the firmware borrows from the host ({@code MLX5_ADAPTER_PAGE_SIZE}): its own working memory,
 * asked for with QUERY_PAGES (boot, init) or PAGE_REQUEST events and handed over with MANAGE_PAGES (mlx5 core
 * pagealloc.c). Pages come from DMA regions of the function, one region per grant; a region is released when the
 * firmware has returned all of its pages, or at {@link #close()} after the function is disabled.
 */
final class FirmwarePages implements AutoCloseable {

    static final int PAGE = 4096;
    /** Pages per MANAGE_PAGES take: bounds the output to 16 + 4 KiB. */
    static final int TAKE_BATCH = 512;

    private record Grant(DmaRegion region, int[] outstanding) {
    }

    private final Mlx5Function function;
    private final Map<Long, Grant> byIova = new HashMap<>();
    private final List<Grant> grants = new ArrayList<>();
    private int given;

    FirmwarePages(Mlx5Function function) {
        this.function = function;
    }

    /** Pages the firmware holds now. */
    synchronized int given() {
        return given;
    }

    /** Allocates {@code n} pages and gives them with MANAGE_PAGES; nothing is kept if the command fails. */
    synchronized void give(HcaCommands cmds, int functionId, int n) {
        if (n <= 0) {
            return;
        }
        DmaRegion region = function.allocateDma((long) n * PAGE);
        long[] iovas = new long[n];
        try {
            for (int i = 0; i < n; i++) {
                iovas[i] = region.iova((long) i * PAGE);
                if ((iovas[i] & (PAGE - 1)) != 0) {
                    throw new IllegalStateException(String.format("firmware page IOVA 0x%x is not 4 KiB aligned", iovas[i]));
                }
            }
            cmds.givePages(functionId, iovas, n);
        } catch (RuntimeException e) {
            region.close();
            throw e;
        }
        Grant g = new Grant(region, new int[] {n});
        grants.add(g);
        for (long iova : iovas) {
            byIova.put(iova, g);
        }
        given += n;
    }

    /**
     * Asks for up to {@code n} pages back (MANAGE_PAGES take, in batches) and releases regions the firmware no longer
     * uses. Returns the number of pages returned; stops early when the firmware returns none.
     */
    synchronized int reclaim(HcaCommands cmds, int functionId, int n) {
        long[] back = new long[TAKE_BATCH];
        int total = 0;
        while (total < n) {
            int got = cmds.takePages(functionId, Math.min(TAKE_BATCH, n - total), back);
            if (got == 0) {
                break;
            }
            for (int i = 0; i < got; i++) {
                Grant g = byIova.remove(back[i]);
                if (g == null) {
                    throw new IllegalStateException(String.format("firmware returned page 0x%x it was never given", back[i]));
                }
                given--;
                if (--g.outstanding()[0] == 0) {
                    grants.remove(g);
                    g.region().close();
                }
            }
            total += got;
        }
        return total;
    }

    /** Releases every region; the firmware must not use the pages any more (function disabled or never enabled). */
    @Override
    public synchronized void close() {
        for (Grant g : grants) {
            g.region().close();
        }
        grants.clear();
        byIova.clear();
        given = 0;
    }
}

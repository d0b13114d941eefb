package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.jhca.mlx5.Mlx5Context;
import io.jhca.mlx5.Mlx5Provider;
import io.jhca.mlx5.init.Mlx5Options;
import io.jhca.verbs.DeviceInfo;

/**
 * Firmware page requests after INIT_HCA, both ways: the model raises PAGE_REQUEST events on the async EQ (more pages
 * wanted, pages to take back) and the mlx5 provider's event thread serves them with MANAGE_PAGES give and take; both
 * sides' counts must agree afterwards.
 */
class PageRequestTest {

    private ModelFunction fn;
    private Mlx5Context ctx;

    @AfterEach
    void close() {
        if (ctx != null) {
            ctx.close();
        }
    }

    @Test
    void theDriverGivesAndTakesBackWhatTheFirmwareAsks() throws Exception {
        fn = ModelFunction.open("pages0", InetAddress.getByName("127.0.0.43"));
        ctx = Mlx5Provider.open(new DeviceInfo("pages0", "mlx5", 0, "InfiniBand"), fn, Mlx5Options.defaults());
        int base = fn.model().firmwarePages();
        assertEquals(base, ctx.hca().pagesGiven(), "after bring-up both sides count the same pages");

        fn.model().requestPages(5);
        AwaitValue.of("pages the driver gave", base + 5, () -> ctx.hca().pagesGiven());
        AwaitValue.of("pages the model holds", base + 5, () -> fn.model().firmwarePages());

        fn.model().requestPages(-3);
        AwaitValue.of("pages the driver holds given", base + 2, () -> ctx.hca().pagesGiven());
        AwaitValue.of("pages the model holds", base + 2, () -> fn.model().firmwarePages());

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> fn.model().requestPages(-3));
        assertEquals("the firmware can give back at most the 2 pages it asked for since INIT_HCA, not 3",
                e.getMessage());
        ctx.allocatePd().close(); // still serving commands
    }

    @Test
    void commandCompletionsAlsoArriveAsCmdEvents() throws Exception {
        fn = ModelFunction.open("pages1", InetAddress.getByName("127.0.0.44"));
        ctx = Mlx5Provider.open(new DeviceInfo("pages1", "mlx5", 0, "InfiniBand"), fn, Mlx5Options.defaults());
        long before = ctx.hca().commands().queue().completionEvents();
        for (int i = 0; i < 4; i++) {
            ctx.allocatePd().close();
        }
        // eight commands, each answered with a CMD EQE on the async EQ, which the provider's event thread consumes
        // (bring-up's last events may still be arriving: at least eight more)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (ctx.hca().commands().queue().completionEvents() < before + 8) {
            if (System.nanoTime() > deadline) {
                fail("CMD events: " + ctx.hca().commands().queue().completionEvents() + ", expected at least "
                        + (before + 8) + " within 20 s");
            }
            Thread.onSpinWait();
        }
    }
}

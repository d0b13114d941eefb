package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.jhca.mlx5.Mlx5Context;
import io.jhca.mlx5.Mlx5Provider;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.CmdQueue;
import io.jhca.mlx5.cmd.CmdQueueOptions;
import io.jhca.mlx5.cmd.DeviceHealthException;
import io.jhca.mlx5.cmd.HcaLayouts;
import io.jhca.mlx5.cmd.InitSegment;
import io.jhca.mlx5.init.FunctionCmdMemory;
import io.jhca.mlx5.init.Mlx5Options;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.VerbsException;

/**
 * A dead or stuck device is a clear error while a command waits, not a wait for the whole command timeout: the
 * driver's command queue reads the health registers as mlx5_core's health poller does, and the model can hang its
 * firmware (frozen health counter) or leave the bus (BAR0 reads all ones). The command timeout here is 60 s, far
 * above what any of these waits may take, so a test that passes did not pass by timing out.
 */
class HealthTest {

    private static final String IP = "127.0.0.41";
    private HostDriver drv;
    private Mlx5Context ctx;

    @AfterEach
    void close() {
        if (ctx != null) {
            ctx.close();
        }
        if (drv != null) {
            drv.close();
        }
    }

    private void openQueue(long stallMillis) throws Exception {
        drv = HostDriver.open("health0", IP);
        assertTrue(drv.iseg.awaitInitialized(10_000));
        drv.cmdq = CmdQueue.open(drv.iseg, new FunctionCmdMemory(drv.fn),
                CmdQueueOptions.defaults().timeoutMillis(60_000).healthStallMillis(stallMillis));
        assertTrue(drv.iseg.awaitInitialized(10_000));
        drv.enableHca();
    }

    @Test
    void aLiveDeviceIsHealthyThroughAShortStallWindow() throws Exception {
        openQueue(2_000); // the model ticks every 10 ms: a live device never looks stuck
        for (int i = 0; i < 20; i++) {
            drv.queryPages(HcaLayouts.PAGES_BOOT);
        }
    }

    @Test
    void aHungFirmwareIsReportedAsStuck() throws Exception {
        openQueue(300);
        drv.fn.model().hang();
        DeviceHealthException e = assertThrows(DeviceHealthException.class, () -> drv.queryPages(HcaLayouts.PAGES_BOOT));
        assertEquals(CmdOpcode.QUERY_PAGES, e.opcode());
        assertTrue(e.getMessage().contains("firmware stuck: health counter frozen at"), e.getMessage());
    }

    @Test
    void aRemovedFunctionIsReportedAsGone() throws Exception {
        openQueue(60_000);
        drv.fn.model().surpriseRemoval();
        DeviceHealthException e = assertThrows(DeviceHealthException.class, () -> drv.queryPages(HcaLayouts.PAGES_BOOT));
        assertTrue(e.getMessage().contains("fw_ver reads 0xffffffff"), e.getMessage());
        assertEquals(0xffffffff, drv.iseg.healthFwVer());
    }

    @Test
    void theEventThreadReportsAHungDeviceAsDeviceFatal() throws Exception {
        System.setProperty("jhca.mlx5.healthStallMs", "300");
        try {
            ModelFunction fn = ModelFunction.open("health2", InetAddress.getByName("127.0.0.45"));
            ctx = Mlx5Provider.open(new DeviceInfo("health2", "mlx5", 0, "InfiniBand"), fn, Mlx5Options.defaults());
        } finally {
            System.clearProperty("jhca.mlx5.healthStallMs");
        }
        assertNull(ctx.pollAsyncEvent(), "a live device reports nothing");
        ((ModelFunction) ctx.function()).model().hang();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        AsyncEvent ev;
        while ((ev = ctx.pollAsyncEvent()) == null) {
            if (System.nanoTime() > deadline) {
                fail("no DEVICE_FATAL event within 20 s of the firmware hanging");
            }
            Thread.sleep(10);
        }
        assertEquals(AsyncEvent.Type.DEVICE_FATAL, ev.type(), ev.toString());
        assertTrue(ev.toString().contains("health counter frozen"), ev.toString());
        Mlx5Context hung = ctx;
        ctx = null;
        // the device is declared dead: teardown sends it nothing (mlx5_core answers teardown commands itself)
        hung.close();
        assertTrue(hung.isClosed());
    }

    @Test
    void throughTheVerbsApiARemovedFunctionFailsTheNextCallByName() throws Exception {
        ModelFunction fn = ModelFunction.open("health1", InetAddress.getByName("127.0.0.42"));
        ctx = Mlx5Provider.open(new DeviceInfo("health1", "mlx5", 0, "InfiniBand"), fn, Mlx5Options.defaults());
        ctx.allocatePd().close();
        fn.model().surpriseRemoval();
        RuntimeException e = assertThrows(RuntimeException.class, () -> ctx.allocatePd());
        String text = e + " / " + e.getCause();
        assertTrue(text.contains("ALLOC_PD") && text.contains("device not responding"), text);
        assertTrue(e instanceof VerbsException || e instanceof DeviceHealthException, e.toString());
        assertEquals(0xffffffff, new InitSegment(fn.bar0()).healthFwVer());
        Mlx5Context gone = ctx;
        ctx = null;
        // the failed command declared the device dead: closing sends it nothing and succeeds
        gone.close();
        assertTrue(gone.isClosed());
    }
}

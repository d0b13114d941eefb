package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;


/**
 * Event mode ({@code -e}) between the two simulated ConnectX functions mlx5_0 and mlx5_1 in this JVM, as
 * {@link RxeToolsTest}'s event runs do on rxe: the tools arm their CQs back to back (perftest's send and receive CQs),
 * which the device model must each take. The functions' ports are moved from the defaults (127.0.0.3/.4) to
 * 127.0.72.3/.4 through the model's jhca.mlx5.sim property, so no other process using the defaults collides.
 */
class ModelEventToolsTest {

    /**
     * The tools' end-to-end checks on the model pair, used as helpers. Private, so that no engine runs it as a test
     * class of its own (a package-visible nested class was run by surefire without the moved addresses).
     */
    private static final class ModelPair extends ToolsEndToEnd {
        @Override
        String dev0() {
            return "mlx5_0";
        }

        @Override
        String dev1() {
            return "mlx5_1";
        }

        @Override
        String ip0() {
            return "127.0.72.3";
        }

        @Override
        String ip1() {
            return "127.0.72.4";
        }
    }

    private final ModelPair pair = new ModelPair();

    @RegisterExtension
    static final DevicesProperty DEVICES = DevicesProperty.model("127.0.72.3", "127.0.72.4");

    @Test
    void sendLatencyWithEvents() {
        ToolsEndToEnd.LatencyRow send = pair.latency("send-lat", "-e", "--no-udp-baseline");
        assertTrue(send.run().out().contains(" Test with events. Using mlx5_1_comp0\n"), send.run().out());
        assertEquals(64, (int) pair.latency("read-lat", "-e", "-s", "64", "--no-udp-baseline").n()[0]);
    }

    @Test
    void sendBandwidthWithEvents() {
        ToolsEndToEnd.BwRow bw = pair.bandwidth("send-bw", "-e", "-s", "2048", "-Q", "10");
        assertEquals(ToolsEndToEnd.ITERS, (int) bw.n()[1]);
    }

    @Test
    void rcPingpongWithEvents() throws Exception {
        pair.rcPingpongRun(true);
    }
}

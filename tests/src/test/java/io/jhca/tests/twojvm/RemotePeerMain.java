package io.jhca.tests.twojvm;

import io.jhca.tests.harness.Payloads;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.Verbs;
import io.jhca.verbs.WrOpcode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * The second JVM of {@code TwoJvmTest}: opens the device named in args[1] (configured for this JVM by
 * {@code -Djhca.rxe.devices=<name>=<ip>}), exchanges endpoints with the parent on args[2] (default 127.0.0.1)
 * port args[0], then
 * SENDs {@link Side#MESSAGES} messages, RDMA WRITEs 1 MiB and announces it with a SEND with immediate, and checks
 * the 256 KiB the parent RDMA WRITEs back. Exit status 0 means every step passed; anything else is printed.
 */
public final class RemotePeerMain {
    private RemotePeerMain() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String device = args[1];
        // args[2]: where the parent listens, when the child runs in another network namespace (default loopback)
        InetAddress parentHost = args.length > 2 ? InetAddress.getByName(args[2]) : InetAddress.getLoopbackAddress();
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(parentHost, port), 10_000);
            s.setSoTimeout(60_000);
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
            PrintWriter out = new PrintWriter(s.getOutputStream(), true, StandardCharsets.US_ASCII);
            try (Side side = new Side(Verbs.open(device))) {
                // Client writes first, as rc_pingpong's client does; the parent replies once it is in RTS.
                out.println(side.endpoint().line());
                Endpoint parent = Endpoint.parse(in.readLine());
                side.connect(parent);
                System.out.println("child: " + device + " QPN 0x" + Integer.toHexString(side.qp.qpn()) + " connected to 0x"
                        + Integer.toHexString(parent.qpn()));

                for (int i = 0; i < Side.MESSAGES; i++) {
                    Payloads.fill(side.mem.buffer(), 0, Side.size(i), i);
                    side.post(side.send(i, 0, Side.size(i)));
                    side.await("SEND " + i, 20_000);
                }
                Payloads.fill(side.mem.buffer(), 0, Side.WRITE_LEN, 4242);
                side.post(new SendWr().wrId(1000).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                        .sge(side.mr, 0, Side.WRITE_LEN).rdma(parent.addr() + Side.WRITE_OFF, parent.rkey()));
                side.await("RDMA WRITE of 1 MiB", 20_000);
                side.post(new SendWr().wrId(1001).opcode(WrOpcode.SEND_WITH_IMM).immData(Side.IMM_WRITE_DONE)
                        .sendFlags(SendFlags.SIGNALED).numSge(0));
                side.await("SEND_WITH_IMM announcing the WRITE", 20_000);

                // The parent writes 256 KiB into our buffer at 1 MiB, then says so with its CRC.
                String wrote = in.readLine();
                if (wrote == null || !wrote.startsWith("WROTE ")) {
                    throw new IllegalStateException("expected 'WROTE <crc>' from the parent, got '" + wrote + "'");
                }
                long want = Long.parseLong(wrote.substring(6), 16);
                long got = Payloads.crc(side.mem.buffer(), 1 << 20, 256 << 10);
                if (got != want) {
                    out.println("DONE bad-crc " + Long.toHexString(got));
                    throw new IllegalStateException("the parent's RDMA WRITE arrived with CRC " + Long.toHexString(got)
                            + ", expected " + Long.toHexString(want));
                }
                out.println("DONE ok");
            }
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(3);
        }
        System.exit(0);
    }
}

package io.jhca.cm.endpoint;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

import io.jhca.cm.CmDevices;
import io.jhca.cm.CmEvent;
import io.jhca.cm.CmEventChannel;
import io.jhca.cm.CmEventType;
import io.jhca.cm.CmException;
import io.jhca.cm.CmId;
import io.jhca.verbs.Context;

/**
 * Listens on an address of a device and hands out an {@link RdmaEndpoint} for each connection it accepts. The
 * endpoints share this server's event channel; close them before the server.
 */
public final class RdmaServerEndpoint implements AutoCloseable {
    private final Context ctx;
    private final CmEventChannel channel = CmEventChannel.create();
    private final CmId listener;
    private final EndpointConfig config;

    private RdmaServerEndpoint(Context ctx, InetSocketAddress address, int backlog, EndpointConfig config) {
        this.ctx = ctx;
        this.config = config;
        CmDevices.attach(ctx);
        try {
            this.listener = channel.createId();
            listener.bindAddr(address);
            listener.listen(backlog);
        } catch (RuntimeException e) {
            channel.close();
            CmDevices.detach(ctx);
            throw e;
        }
    }

    /** Listens on {@code address} (one of the device's IP addresses) with room for {@code backlog} requests. */
    public static RdmaServerEndpoint listen(Context ctx, InetSocketAddress address, int backlog) {
        return new RdmaServerEndpoint(ctx, address, backlog, EndpointConfig.defaults());
    }

    public static RdmaServerEndpoint listen(Context ctx, InetSocketAddress address, int backlog, EndpointConfig c) {
        return new RdmaServerEndpoint(ctx, address, backlog, c);
    }

    public InetSocketAddress localAddress() {
        return listener.localAddress();
    }

    /** Waits for the next connection request and accepts it; the endpoint is connected when this returns. */
    public RdmaEndpoint accept() {
        long until = System.currentTimeMillis() + config.timeoutMillis();
        while (System.currentTimeMillis() < until) {
            CmEvent e;
            try {
                e = channel.get(20, TimeUnit.MILLISECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new CmException("interrupted while accepting");
            }
            if (e == null || e.type() != CmEventType.CONNECT_REQUEST) {
                continue; // events of earlier endpoints (DISCONNECTED, TIMEWAIT_EXIT) are theirs to notice
            }
            RdmaEndpoint ep = new RdmaEndpoint(e.id(), channel, false, config);
            try {
                e.id().accept(config.connParam());
                ep.awaitEstablished();
            } catch (RuntimeException ex) {
                ep.close();
                throw ex;
            }
            return ep;
        }
        throw new CmException("no connection request within " + config.timeoutMillis() + " ms on " + localAddress());
    }

    @Override
    public void close() {
        listener.close();
        channel.close();
        CmDevices.detach(ctx);
    }
}

package io.jhca.cm.endpoint;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import io.jhca.cm.CmDevices;
import io.jhca.cm.CmEventChannel;
import io.jhca.cm.CmEventType;
import io.jhca.cm.CmException;
import io.jhca.cm.CmId;
import io.jhca.verbs.Context;

/** Connects an {@link RdmaEndpoint} to a server: address and route resolution, QP, buffers, connect. */
public final class RdmaClientEndpoint {
    private RdmaClientEndpoint() {
    }

    /** Connects from the device {@code ctx} (its first IPv4 GID is the source address) to {@code server}. */
    public static RdmaEndpoint connect(Context ctx, InetSocketAddress server) {
        return connect(ctx, server, EndpointConfig.defaults());
    }

    public static RdmaEndpoint connect(Context ctx, InetSocketAddress server, EndpointConfig config) {
        CmDevices.attach(ctx);
        CmEventChannel ch = CmEventChannel.create();
        CmId id = ch.createId();
        RdmaEndpoint ep = null;
        try {
            id.resolveAddr(sourceOf(ctx), server, config.timeoutMillis());
            ch.expect(CmEventType.ADDR_RESOLVED, config.timeoutMillis());
            id.resolveRoute(config.timeoutMillis());
            ch.expect(CmEventType.ROUTE_RESOLVED, config.timeoutMillis());
            ep = new RdmaEndpoint(id, ch, true, config);
            id.connect(config.connParam());
            ep.awaitEstablished();
            return ep;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CmException("interrupted while connecting to " + server, e);
        } catch (RuntimeException e) {
            if (ep != null) {
                ep.close();
            } else {
                id.close();
                ch.close();
            }
            throw e;
        } finally {
            CmDevices.detach(ctx);
        }
    }

    static InetAddress sourceOf(Context ctx) {
        for (int i = 0; i < ctx.queryPort(1).gidTblLen(); i++) {
            InetAddress a = ctx.queryGid(1, i).toInetAddress();
            if (a instanceof java.net.Inet4Address && !a.isAnyLocalAddress()) {
                return a;
            }
        }
        throw new CmException(ctx.name() + " has no IPv4 GID to connect from");
    }
}

package io.jhca.cm;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import io.jhca.cm.ib.ConnectionManager;
import io.jhca.cm.ib.GsiPort;
import io.jhca.verbs.Context;

/**
 * The connection manager of one device: its QP1 ({@link GsiPort}), the IB CM ({@link ConnectionManager}) and a
 * daemon thread that receives MADs and fires timers. Calls from applications take the same lock.
 */
final class CmAgent implements AutoCloseable {
    private final Context context;
    private final GsiPort gsi;
    private final ConnectionManager cm;
    private final ReentrantLock lock = new ReentrantLock();
    private final Thread thread;
    private volatile boolean running = true;

    CmAgent(Context context) {
        this.context = context;
        this.gsi = new GsiPort(context);
        this.cm = new ConnectionManager(gsi::send, context.queryDevice().nodeGuid());
        cm.gidIndexer(g -> CmDevices.gidIndex(context, g));
        this.thread = new Thread(this::run, "jhca-cm-" + context.name());
        thread.setDaemon(true);
        thread.start();
    }

    Context context() {
        return context;
    }

    ConnectionManager cm() {
        return cm;
    }

    void lock() {
        lock.lock();
    }

    void unlock() {
        lock.unlock();
    }

    private void run() {
        while (running) {
            int n;
            lock.lock();
            try {
                long now = System.nanoTime();
                n = gsi.poll(r -> cm.deliver(r.mad(), r.source(), now));
                cm.tick(System.nanoTime());
            } catch (RuntimeException e) {
                if (!running || context.isClosed()) {
                    return;
                }
                System.err.println("jhca cm " + context.name() + ": " + e);
                n = 0;
            } finally {
                lock.unlock();
            }
            if (n == 0) {
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
            }
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        lock.lock();
        try {
            if (!context.isClosed()) {
                gsi.close();
            }
        } finally {
            lock.unlock();
        }
    }
}

package io.jhca.cm.ib;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Predicate;

import io.jhca.cm.mad.CmMessages;
import io.jhca.cm.mad.Mad;
import io.jhca.verbs.Gid;

/** Connection managers joined by an in-memory wire with a manual clock, seeded random loss and chosen drops. */
final class MemoryWire {
    record InFlight(Mad mad, Gid from, Gid to) {
    }

    final Map<Gid, ConnectionManager> cms = new HashMap<>();
    final ArrayDeque<InFlight> queue = new ArrayDeque<>();
    final List<InFlight> log = new ArrayList<>();
    final Random random;
    double loss;
    Predicate<InFlight> dropIf = f -> false;
    long now = 1_000_000_000L;

    MemoryWire(long seed) {
        this.random = new Random(seed);
    }

    ConnectionManager add(Gid gid, long guid) {
        ConnectionManager cm = new ConnectionManager((m, dest, sgid) -> {
            InFlight f = new InFlight(Mad.wrap(m.bytes(), 0, Mad.SIZE), gid, dest);
            log.add(f);
            if (!dropIf.test(f) && random.nextDouble() >= loss) {
                queue.add(f);
            }
        }, guid);
        cms.put(gid, cm);
        return cm;
    }

    /** Delivers everything in flight (and what that causes) without moving the clock. */
    void drain() {
        int guard = 0;
        while (!queue.isEmpty()) {
            InFlight f = queue.poll();
            ConnectionManager to = cms.get(f.to());
            if (to != null) {
                to.deliver(f.mad(), f.from(), now);
            }
            if (++guard > 100_000) {
                throw new AssertionError("the wire never settles");
            }
        }
    }

    /** Moves the clock by {@code nanos}, fires timers, delivers. */
    void advance(long nanos) {
        now += nanos;
        for (ConnectionManager cm : cms.values()) {
            cm.tick(now);
        }
        drain();
    }

    long sent(int attributeId) {
        return log.stream().filter(f -> f.mad().attributeId() == attributeId).count();
    }

    List<String> names() {
        return log.stream().map(f -> CmMessages.name(f.mad().attributeId())).toList();
    }
}

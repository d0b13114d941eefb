package io.jhca.lab;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A line chart small enough to draw by hand: axes with ticks (linear or logarithmic x), one polyline per
 * series and a legend. It draws onto a {@link Canvas}, implemented for PNG ({@link PngCanvas}, java.awt in
 * headless mode) and SVG ({@link SvgCanvas}, plain text), so both files show the same picture.
 */
public final class Chart {
    public static final int WIDTH = 960;
    public static final int HEIGHT = 600;
    private static final int LEFT = 90;
    private static final int RIGHT = 230;
    private static final int TOP = 56;
    private static final int BOTTOM = 70;
    /** Colour-blind-safe palette (Okabe-Ito), RGB. */
    static final int[] PALETTE = {0x0072B2, 0xD55E00, 0x009E73, 0xCC79A7, 0xE69F00, 0x56B4E9, 0xF0E442, 0x000000};

    /** What a chart is drawn on; coordinates in pixels from the top-left corner. */
    public interface Canvas {
        void line(double x1, double y1, double x2, double y2, int rgb, float width, boolean dashed);

        void polyline(double[] xs, double[] ys, int n, int rgb, float width, boolean dashed);

        /** {@code anchor}: -1 start, 0 middle, 1 end; {@code vertical} rotates by -90 degrees about (x, y). */
        void text(String s, double x, double y, int size, int anchor, boolean vertical, boolean bold);
    }

    /** One line of the chart. */
    public record Series(String name, double[] x, double[] y, boolean dashed, boolean markers) {
    }

    private final String title;
    private final String xLabel;
    private final String yLabel;
    private final boolean logX;
    private boolean binaryX;
    private final List<Series> series = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private Double yMinFixed;
    private Double yMaxFixed;

    public Chart(String title, String xLabel, String yLabel, boolean logX) {
        this.title = title;
        this.xLabel = xLabel;
        this.yLabel = yLabel;
        this.logX = logX;
    }

    public Chart add(Series s) {
        if (s.x().length > 0) {
            series.add(s);
        }
        return this;
    }

    /** Label a logarithmic x axis in powers of two (2, 16, 128, 1K, ... 8M): for message sizes. */
    public Chart binaryX() {
        binaryX = true;
        return this;
    }

    public Chart yRange(double min, double max) {
        yMinFixed = min;
        yMaxFixed = max;
        return this;
    }

    /** A line of small text under the legend (e.g. the JVM and GC). */
    public Chart note(String n) {
        notes.add(n);
        return this;
    }

    public List<Series> series() {
        return series;
    }

    public void draw(Canvas c) {
        double x0 = Double.MAX_VALUE;
        double x1 = -Double.MAX_VALUE;
        double y0 = Double.MAX_VALUE;
        double y1 = -Double.MAX_VALUE;
        for (Series s : series) {
            for (int i = 0; i < s.x().length; i++) {
                if (logX && s.x()[i] <= 0) {
                    continue;
                }
                x0 = Math.min(x0, s.x()[i]);
                x1 = Math.max(x1, s.x()[i]);
                y0 = Math.min(y0, s.y()[i]);
                y1 = Math.max(y1, s.y()[i]);
            }
        }
        if (x0 > x1) {
            x0 = 1;
            x1 = 10;
            y0 = 0;
            y1 = 1;
        }
        if (yMinFixed != null) {
            y0 = yMinFixed;
            y1 = yMaxFixed;
        } else {
            y0 = Math.min(0, y0);
            y1 = y1 <= y0 ? y0 + 1 : y1 * 1.05;
        }
        double lx0;
        double lx1;
        if (logX) {
            lx0 = Math.floor(Math.log10(x0) * 4) / 4;
            lx1 = Math.ceil(Math.log10(x1) * 4) / 4;
            if (lx1 <= lx0) {
                lx1 = lx0 + 1;
            }
        } else {
            lx0 = Math.min(0, x0);
            lx1 = x1 <= lx0 ? lx0 + 1 : x1 * 1.02;
        }
        final double plotW = WIDTH - LEFT - RIGHT;
        final double plotH = HEIGHT - TOP - BOTTOM;
        final double fx0 = lx0;
        final double fx1 = lx1;
        final double fy0 = y0;
        final double fy1 = y1;
        java.util.function.DoubleUnaryOperator px = v -> LEFT + ((logX ? Math.log10(v) : v) - fx0) / (fx1 - fx0) * plotW;
        java.util.function.DoubleUnaryOperator py = v -> TOP + plotH - (v - fy0) / (fy1 - fy0) * plotH;

        c.text(title, WIDTH / 2.0, 32, 18, 0, false, true);
        // grid and ticks
        for (double t : binaryX ? binaryTicks(fx0, fx1) : logX ? logTicks(fx0, fx1) : niceTicks(fx0, fx1)) {
            double x = px.applyAsDouble(t);
            c.line(x, TOP, x, TOP + plotH, 0xE0E0E0, 1, false);
            c.line(x, TOP + plotH, x, TOP + plotH + 5, 0x000000, 1, false);
            c.text(binaryX ? binaryLabel(t) : label(t), x, TOP + plotH + 20, 12, 0, false, false);
        }
        for (double t : niceTicks(fy0, fy1)) {
            double y = py.applyAsDouble(t);
            c.line(LEFT, y, LEFT + plotW, y, 0xE0E0E0, 1, false);
            c.line(LEFT - 5, y, LEFT, y, 0x000000, 1, false);
            c.text(label(t), LEFT - 8, y + 4, 12, 1, false, false);
        }
        c.line(LEFT, TOP, LEFT, TOP + plotH, 0x000000, 1.5f, false);
        c.line(LEFT, TOP + plotH, LEFT + plotW, TOP + plotH, 0x000000, 1.5f, false);
        c.text(xLabel, LEFT + plotW / 2, HEIGHT - 22, 14, 0, false, false);
        c.text(yLabel, 24, TOP + plotH / 2, 14, 0, true, false);

        int k = 0;
        double legendY = TOP + 10;
        for (Series s : series) {
            int rgb = PALETTE[k++ % PALETTE.length];
            double[] xs = new double[s.x().length];
            double[] ys = new double[s.x().length];
            int n = 0;
            for (int i = 0; i < s.x().length; i++) {
                if (logX && s.x()[i] <= 0) {
                    continue;
                }
                xs[n] = px.applyAsDouble(s.x()[i]);
                ys[n] = py.applyAsDouble(Math.max(fy0, Math.min(fy1, s.y()[i])));
                n++;
            }
            c.polyline(xs, ys, n, rgb, 2f, s.dashed());
            if (s.markers()) {
                for (int i = 0; i < n; i++) {
                    c.line(xs[i] - 3, ys[i], xs[i] + 3, ys[i], rgb, 2f, false);
                    c.line(xs[i], ys[i] - 3, xs[i], ys[i] + 3, rgb, 2f, false);
                }
            }
            double lx = LEFT + plotW + 16;
            c.line(lx, legendY, lx + 26, legendY, rgb, 2.5f, s.dashed());
            c.text(s.name(), lx + 32, legendY + 4, 12, -1, false, false);
            legendY += 20;
        }
        legendY += 10;
        for (String n : notes) {
            for (String line : wrap(n, 36)) {
                c.text(line, LEFT + plotW + 16, legendY, 10, -1, false, false);
                legendY += 14;
            }
            legendY += 4;
        }
    }

    static List<Double> niceTicks(double lo, double hi) {
        double span = hi - lo;
        double raw = span / 8;
        double mag = Math.pow(10, Math.floor(Math.log10(raw)));
        double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
        List<Double> t = new ArrayList<>();
        for (double v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
            t.add(Math.abs(v) < step * 1e-9 ? 0 : v);
        }
        return t;
    }

    /** Ticks at 1, 2, 5 x 10^k between 10^lo and 10^hi (log10 exponents). */
    static List<Double> logTicks(double lo, double hi) {
        List<Double> t = new ArrayList<>();
        boolean sparse = hi - lo > 4;
        for (int e = (int) Math.floor(lo); e <= (int) Math.ceil(hi); e++) {
            for (int m : sparse ? new int[] {1} : new int[] {1, 2, 5}) {
                double v = m * Math.pow(10, e);
                double lv = Math.log10(v);
                if (lv >= lo - 1e-9 && lv <= hi + 1e-9) {
                    t.add(v);
                }
            }
        }
        return t;
    }

    /** Powers of two between 10^lo and 10^hi, every third one (2, 16, 128, ...), or every one if few. */
    static List<Double> binaryTicks(double lo, double hi) {
        List<Double> t = new ArrayList<>();
        int e0 = (int) Math.ceil(lo / Math.log10(2) - 1e-9);
        int e1 = (int) Math.floor(hi / Math.log10(2) + 1e-9);
        int step = e1 - e0 > 10 ? 3 : 1;
        for (int e = e0; e <= e1; e++) {
            if ((e - 1) % step == 0) {
                t.add(Math.pow(2, e));
            }
        }
        return t;
    }

    /** 512, 4K, 64K, 8M. */
    static String binaryLabel(double v) {
        long n = Math.round(v);
        if (n >= 1 << 20 && n % (1 << 20) == 0) {
            return (n >> 20) + "M";
        }
        if (n >= 1024 && n % 1024 == 0) {
            return (n >> 10) + "K";
        }
        return Long.toString(n);
    }

    /** Splits a note into lines of at most {@code width} characters at spaces (long words stay whole). */
    static List<String> wrap(String s, int width) {
        List<String> lines = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        for (String w : s.split(" ")) {
            if (cur.length() > 0 && cur.length() + 1 + w.length() > width) {
                lines.add(cur.toString());
                cur.setLength(0);
            }
            cur.append(cur.length() == 0 ? "" : " ").append(w);
        }
        if (cur.length() > 0) {
            lines.add(cur.toString());
        }
        return lines;
    }

    static String label(double v) {
        double a = Math.abs(v);
        if (a >= 1e6 && a == Math.rint(a)) {
            return String.format(Locale.ROOT, "%.0fM", v / 1e6);
        }
        if (a >= 1e4 && a == Math.rint(a)) {
            return String.format(Locale.ROOT, "%.0fk", v / 1e3);
        }
        if (a == Math.rint(a)) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 1) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2g", v);
    }
}

package io.jhca.lab;

import java.util.Locale;

/** A {@link Chart.Canvas} that writes SVG text (no AWT needed). */
public final class SvgCanvas implements Chart.Canvas {
    private final StringBuilder sb = new StringBuilder();

    public SvgCanvas(int width, int height) {
        sb.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                        + "font-family=\"sans-serif\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n",
                width, height, width, height));
    }

    private static String color(int rgb) {
        return String.format(Locale.ROOT, "#%06x", rgb & 0xFFFFFF);
    }

    private static String dash(boolean dashed) {
        return dashed ? " stroke-dasharray=\"6,4\"" : "";
    }

    @Override
    public void line(double x1, double y1, double x2, double y2, int rgb, float width, boolean dashed) {
        sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                + "stroke-width=\"%.1f\"%s/>%n", x1, y1, x2, y2, color(rgb), width, dash(dashed)));
    }

    @Override
    public void polyline(double[] xs, double[] ys, int n, int rgb, float width, boolean dashed) {
        if (n == 0) {
            return;
        }
        sb.append("<polyline fill=\"none\" stroke=\"").append(color(rgb)).append("\" stroke-width=\"")
                .append(String.format(Locale.ROOT, "%.1f", width)).append('"').append(dash(dashed)).append(" points=\"");
        for (int i = 0; i < n; i++) {
            sb.append(String.format(Locale.ROOT, "%s%.1f,%.1f", i == 0 ? "" : " ", xs[i], ys[i]));
        }
        sb.append("\"/>\n");
    }

    @Override
    public void text(String s, double x, double y, int size, int anchor, boolean vertical, boolean bold) {
        String a = anchor < 0 ? "start" : anchor == 0 ? "middle" : "end";
        sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\"%s%s>",
                x, y, size, a, bold ? " font-weight=\"bold\"" : "",
                vertical ? String.format(Locale.ROOT, " transform=\"rotate(-90 %.1f %.1f)\"", x, y) : ""));
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '<': sb.append("&lt;"); break;
                case '>': sb.append("&gt;"); break;
                case '&': sb.append("&amp;"); break;
                default: sb.append(ch);
            }
        }
        sb.append("</text>\n");
    }

    public String finish() {
        return sb.append("</svg>\n").toString();
    }
}

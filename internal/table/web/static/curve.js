// The curve. While a round flies the multiplier t milliseconds after take-off
// is floor(100 * e^(0.00006 t)) hundredths: the formula of the server, which
// prices a cashout at the moment it receives it. The drawing is cosmetic.

export const GROWTH = 0.00006;

export function multiplierAt(ms) {
  if (ms <= 0) return 100;
  return Math.floor(100 * Math.exp(GROWTH * Math.floor(ms)));
}

// timeToReach is the server's round.TimeToReach: the first whole millisecond
// after take-off at which multiplierAt is at least m hundredths (a cashout at
// m is priced there; a round crashes at timeToReach(crash point)). The float
// estimate is settled against multiplierAt itself, as the server does.
export function timeToReach(m) {
  if (m <= 100) return 0;
  let ms = Math.ceil(Math.log(m / 100) / GROWTH);
  while (ms > 0 && multiplierAt(ms - 1) >= m) ms--;
  while (multiplierAt(ms) < m) ms++;
  return ms;
}

// draw paints the curve up to elapsed ms (or the whole flight of a crash).
export function draw(canvas, elapsed, crashed) {
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth;
  const h = canvas.clientHeight;
  if (canvas.width !== Math.round(w * ratio) || canvas.height !== Math.round(h * ratio)) {
    canvas.width = Math.round(w * ratio);
    canvas.height = Math.round(h * ratio);
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, w, h);
  const style = getComputedStyle(canvas);
  const pad = 24;
  const tMax = Math.max(8000, elapsed * 1.15);
  const mMax = Math.max(200, multiplierAt(elapsed) * 1.2);
  const x = (ms) => pad + (ms / tMax) * (w - 2 * pad);
  const y = (m) => h - pad - ((m - 100) / (mMax - 100)) * (h - 2 * pad);

  ctx.strokeStyle = style.getPropertyValue('--grid') || '#333';
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(pad, pad / 2);
  ctx.lineTo(pad, h - pad);
  ctx.lineTo(w - pad / 2, h - pad);
  ctx.stroke();
  if (elapsed <= 0) return;

  const steps = 80;
  ctx.beginPath();
  ctx.moveTo(x(0), y(100));
  for (let i = 1; i <= steps; i++) {
    const ms = (elapsed * i) / steps;
    ctx.lineTo(x(ms), y(100 * Math.exp(GROWTH * ms)));
  }
  ctx.strokeStyle = crashed ? (style.getPropertyValue('--bad') || '#e44') : (style.getPropertyValue('--accent') || '#3c9');
  ctx.lineWidth = 3;
  ctx.stroke();
  ctx.lineTo(x(elapsed), y(100));
  ctx.closePath();
  ctx.globalAlpha = 0.12;
  ctx.fillStyle = ctx.strokeStyle;
  ctx.fill();
  ctx.globalAlpha = 1;
}

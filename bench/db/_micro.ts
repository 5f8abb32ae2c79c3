import { openDatabase } from "../../src/db/open.ts";
import { KINDS, ORDER, ORDER_UPDATE, TRADE, BALANCE, CANDLE } from "../../src/protocol/writer-batch.ts";
const db = openDatabase(`/tmp/mb/m${process.pid}.db`, { synchronous: "NORMAL" });
const N = 64 * 470;
function time(label: string, f: (i: number) => void) {
  const t0 = process.cpuUsage();
  for (let b = 0; b < N; b += 64) {
    db.transaction(() => { for (let i = b; i < b + 64; i++) f(i); })();
  }
  const t = process.cpuUsage(t0);
  console.log(label, ((t.user + t.system) / N).toFixed(2), "µs");
}
const ins = db.prepare(ORDER.sql);
const insPlain = db.prepare(ORDER.sql.replace(/ ON CONFLICT.*$/s, ""));
const upd = db.prepare(ORDER_UPDATE.sql);
const args = new Array(13);
let base = 0;
time("order upsert array", (i) => { const id = base + i + 1; args[0]=id;args[1]=1+(id%1000);args[2]="btc_usdt";args[3]=0;args[4]=0;args[5]=100;args[6]=1000;args[7]=0;args[8]=0;args[9]=id;args[10]=id;args[11]=0;args[12]=null; ins.run(args); });
base += N;
time("order upsert spread", (i) => { const id = base + i + 1; ins.run(id,1+(id%1000),"btc_usdt",0,0,100,1000,0,0,id,id,0,null); });
base += N;
time("order upsert array again", (i) => { const id = base + i + 1; args[0]=id;args[1]=1+(id%1000);args[2]="btc_usdt";args[3]=0;args[4]=0;args[5]=100;args[6]=1000;args[7]=0;args[8]=0;args[9]=id;args[10]=id;args[11]=0;args[12]=null; ins.run(args); });
base += N;
time("order insert plain", (i) => { const id = base + i + 1; insPlain.run(id,1+(id%1000),"btc_usdt",0,0,100,1000,0,0,id,id,0,null); });
base += N;
time("order update (closes open)", (i) => { const id = i + 1; upd.run(100, 1000, 1000, 0, id+5, id); });
time("order upsert existing", (i) => { const id = 2*N + i + 1; ins.run(id,1+(id%1000),"btc_usdt",0,0,100,1000,1000,0,id,id,0,null); });
const tr = db.prepare(TRADE.sql);
time("trade insert", (i) => { tr.run(i+1,"btc_usdt",100,1000,i,i+1,1,2,0,0,0,i,0,0); });
const bal = db.prepare(BALANCE.sql);
time("balance upsert", (i) => { bal.run(1+((i*7919)%1000), "usdt", "123456789012345678", "12345678"); });
const cd = db.prepare(CANDLE.sql);
time("candle upsert", (i) => { cd.run("btc_usdt", "1m", 1700000000000 + (i % 11), 1,2,3,4,i); });
const empty = db.prepare("SELECT 1");
time("select 1", () => { empty.get(); });

# mistake: opening a file with the standard library's io (only its in-memory buffers are available)
# expect: StringIO
# forbid: from scipy import io
# forbid: use another name
# fix: io.open(srcpath('sales.csv')).read() => pd.read_csv(srcpath('sales.csv')).to_csv()
import io
text = io.open(srcpath('sales.csv')).read()
buf = io.StringIO(text)
plt.plot([1, 2])
plt.savefig(OUT)

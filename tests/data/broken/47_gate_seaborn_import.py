# mistake: importing a plotting library that is not available
# expect: plotly
# expect: matplotlib
# forbid: use another name
# fix: import plotly.express as px\nfig = px.line(y=[1, 2, 3])\nfig.write_image(OUT) => plt.plot([1, 2, 3])\nplt.savefig(OUT)
import plotly.express as px
fig = px.line(y=[1, 2, 3])
fig.write_image(OUT)

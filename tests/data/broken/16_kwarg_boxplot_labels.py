# mistake: boxplot(labels=) was renamed tick_labels= in matplotlib 3.9 and removed in 3.11
# expect: boxplot() got an unexpected keyword argument 'labels'
# expect: tick_labels
# fix: labels= => tick_labels=
data = [np.random.normal(m, 1, 100) for m in range(3)]
plt.boxplot(data, labels=['a', 'b', 'c'])
plt.savefig(OUT)
